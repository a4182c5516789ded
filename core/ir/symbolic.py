"""Symbolic sizes: monomials with a rational coefficient and integer exponents.

Sizes are the currency of shape inference. They are deliberately tiny and exact
(no sympy) because shape inference re-runs on every edit. Variables come in three
kinds (docs/papers.md, Canvas and Syno): primary (C_in, H, ...: never in a
denominator), coefficient (K, G, s, ...: small, may divide) and dynamic
(x1, x2, ...: introduced by fully-connected primitives, solved later).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from fractions import Fraction
from functools import lru_cache

from .errors import BindingError, SizeError


class VarKind(str, Enum):  # noqa: UP042 (StrEnum would change how kinds print in messages)
    PRIMARY = "primary"
    COEFFICIENT = "coefficient"
    DYNAMIC = "dynamic"


_DYNAMIC_NAME = re.compile(r"x\d+$")
_PRIMARY_PREFIXES = ("C", "H", "W")


def default_kind(name: str) -> VarKind:
    """Kind of a variable not declared in a file: x<k> are dynamic, C*/H*/W* primary."""
    if _DYNAMIC_NAME.match(name):
        return VarKind.DYNAMIC
    if name.startswith(_PRIMARY_PREFIXES):
        return VarKind.PRIMARY
    return VarKind.COEFFICIENT


class Size:
    """coef * prod(var ** exp); immutable and hashable. Its text is kept once made: searches
    sort expressions by their text hundreds of thousands of times."""

    __slots__ = ("_hash", "_text", "coef", "powers")

    def __init__(self, coef: Fraction | int = 1, powers: Mapping[str, int] | Iterable[tuple[str, int]] = ()):
        items = powers.items() if isinstance(powers, Mapping) else powers
        self.coef = coef if type(coef) is Fraction else Fraction(coef)
        self.powers: tuple[tuple[str, int], ...] = tuple(sorted((v, e) for v, e in items if e))
        self._hash = hash((self.coef, self.powers))
        self._text: str | None = None

    @classmethod
    def var(cls, name: str) -> Size:
        return cls(1, ((name, 1),))

    # arithmetic ---------------------------------------------------------
    def _combine(self, other: Size, sign: int) -> Size:
        powers = dict(self.powers)
        for v, e in other.powers:
            powers[v] = powers.get(v, 0) + sign * e
        coef = self.coef * other.coef if sign > 0 else self.coef / other.coef
        return Size(coef, powers)

    def __mul__(self, other: Size | int) -> Size:
        return self._combine(as_size(other), 1)

    __rmul__ = __mul__

    def __truediv__(self, other: Size | int) -> Size:
        other = as_size(other)
        if other.coef == 0:
            raise SizeError("division by zero in a size")
        return self._combine(other, -1)

    def __pow__(self, k: int) -> Size:
        return Size(self.coef**k, {v: e * k for v, e in self.powers})

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if isinstance(other, int):
            other = Size(other)
        return (
            isinstance(other, Size)
            and self._hash == other._hash
            and self.powers == other.powers
            and self.coef.numerator == other.coef.numerator
            and self.coef.denominator == other.coef.denominator
        )

    def __hash__(self) -> int:
        return self._hash

    # inspection ---------------------------------------------------------
    @property
    def variables(self) -> set[str]:
        return {v for v, _ in self.powers}

    def exponent(self, name: str) -> int:
        return dict(self.powers).get(name, 0)

    def numerator(self) -> Size:
        return Size(self.coef.numerator, {v: e for v, e in self.powers if e > 0})

    def denominator(self) -> Size:
        return Size(self.coef.denominator, {v: -e for v, e in self.powers if e < 0})

    def is_constant(self) -> bool:
        return not self.powers

    def divisor_blockers(self, kinds: Mapping[str, VarKind]) -> list[str]:
        """Variables that may not sit in a denominator but do (primary or dynamic)."""
        return [v for v, e in self.powers if e < 0 and kind_of(v, kinds) is not VarKind.COEFFICIENT]

    def _ratio(self, bindings: Mapping[str, int]) -> tuple[int, int]:
        """(numerator, denominator) as plain integers: much faster than Fraction arithmetic."""
        missing = sorted(v for v, _ in self.powers if v not in bindings)
        if missing:
            raise BindingError(f"no value for {', '.join(missing)} in {self}")
        num, den = self.coef.numerator, self.coef.denominator
        for v, e in self.powers:
            if e > 0:
                num *= bindings[v] ** e
            else:
                den *= bindings[v] ** -e
        return num, den

    def evaluate(self, bindings: Mapping[str, int]) -> Fraction:
        return Fraction(*self._ratio(bindings))

    def to_int(self, bindings: Mapping[str, int]) -> int:
        num, den = self._ratio(bindings)
        if num % den:
            shown = ", ".join(f"{v}={bindings[v]}" for v in sorted(self.variables))
            raise BindingError(f"{self} = {Fraction(num, den)} is not an integer (with {shown})")
        return num // den

    def subs(self, values: Mapping[str, Size]) -> Size:
        """Replace variables by sizes (used when solved dynamic variables are applied)."""
        out = Size(self.coef)
        for v, e in self.powers:
            out = out * (values[v] ** e if v in values else Size(1, ((v, e),)))
        return out

    def factors(self, name: Callable[[str], str] = str, power: str = "^") -> tuple[list[str], list[str]]:
        """The numerator's and the denominator's factors as text, each coefficient first (the
        numerator's 1 only when it has nothing else): what __str__ and the generated code of
        core.codegen.sym_sizes join, each with its own operators."""
        num = [name(v) if e == 1 else f"{name(v)}{power}{e}" for v, e in self.powers if e > 0]
        den = [name(v) if e == -1 else f"{name(v)}{power}{-e}" for v, e in self.powers if e < 0]
        if self.coef.numerator != 1 or not num:
            num.insert(0, str(self.coef.numerator))
        if self.coef.denominator != 1:
            den.insert(0, str(self.coef.denominator))
        return num, den

    def __str__(self) -> str:
        if self._text is None:
            num, den = self.factors()
            self._text = "*".join(num) + ("/" + "/".join(den) if den else "")
        return self._text

    def __repr__(self) -> str:
        return f"Size({self})"


def kind_of(name: str, kinds: Mapping[str, VarKind]) -> VarKind:
    return kinds.get(name) or default_kind(name)


def as_size(value) -> Size:
    if isinstance(value, Size):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Size(value)
    if isinstance(value, str):
        return parse_size(value)
    raise SizeError(f"not a size: {value!r}")


_TERM = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(\d+))\s*(?:\^\s*(-?\d+))?\s*")
#: the largest size TVM can index (its indices are 32-bit); files and bindings are held to it
MAX_SIZE = 2**31 - 1
MAX_EXPRESSION = 256  # characters in one size expression
MAX_EXPONENT = 64  # |k| in x^k: larger ones describe no buildable size and would take forever to evaluate


def parse_size(text: str) -> Size:
    """Parse 'C_in*K^2/G', '2*C', '1'. Only names, integers, *, / and ^ are accepted, within
    the limits above (a hostile file must not make evaluation run forever)."""
    if not isinstance(text, str) or not text.strip():
        raise SizeError(f"empty or non-text size expression: {text!r}")
    if len(text) > MAX_EXPRESSION:
        raise SizeError(f"size expression {text[:40]!r}... is {len(text):,} characters long (at most {MAX_EXPRESSION})")
    return _parse(text)


@lru_cache(maxsize=4096)
def _parse(text: str) -> Size:  # sizes are immutable, so parses are shared
    result, pos, op = Size(1), 0, "*"
    while True:
        m = _TERM.match(text, pos)
        if not m or m.end() == pos or not (m.group(1) or m.group(2)):
            raise SizeError(f"cannot read size expression {text!r} at character {pos + 1}")
        name, number, exp = m.group(1), m.group(2), int(m.group(3) or 1)
        if number is not None and int(number) == 0:
            raise SizeError(f"size expression {text!r} contains zero")
        if number is not None and int(number) > MAX_SIZE:
            raise SizeError(
                f"size expression {text!r}: {number[:12]}{'...' if len(number) > 12 else ''} is not a size "
                f"(a whole number from 1 to 2^31 - 1, the largest TVM indexes with 32 bits)"
            )
        if abs(exp) > MAX_EXPONENT:
            raise SizeError(f"size expression {text!r}: exponent {exp} is beyond +-{MAX_EXPONENT}")
        term = Size.var(name) ** exp if name else Size(int(number)) ** exp
        result = result * term if op == "*" else result / term
        pos = m.end()
        if pos == len(text):
            return result
        op = text[pos]
        if op not in "*/":
            raise SizeError(f"unexpected {op!r} in size expression {text!r} at character {pos + 1}")
        pos += 1


def divisor_monomials(size: Size) -> list[Size]:
    """All monomials dividing `size`'s variable part (coefficient 1), smallest first.

    These are the candidate values of a dynamic variable when shape matching
    requires it to divide `size` (Canvas, 'solver by shape matching')."""
    options = [Size(1)]
    for v, e in size.powers:
        if e <= 0:
            continue
        options = [o * Size(1, ((v, k),)) for o in options for k in range(e + 1)]
    return sorted(set(options), key=lambda s: (sum(e for _, e in s.powers), str(s)))


class Poly:
    """A sum of monomials, for FLOPs and parameter counts of whole graphs."""

    __slots__ = ("terms",)

    def __init__(self, terms: Iterable[Size] = ()):
        acc: dict[tuple, Fraction] = {}
        for t in terms:
            acc[t.powers] = acc.get(t.powers, Fraction(0)) + t.coef
        self.terms = {p: c for p, c in acc.items() if c}

    def __add__(self, other: Poly | Size) -> Poly:
        other_terms = other.monomials() if isinstance(other, Poly) else [other]
        return Poly([*self.monomials(), *other_terms])

    def monomials(self) -> list[Size]:
        return [Size(c, p) for p, c in self.terms.items()]

    def evaluate(self, bindings: Mapping[str, int]) -> Fraction:
        return sum((m.evaluate(bindings) for m in self.monomials()), Fraction(0))

    def to_int(self, bindings: Mapping[str, int]) -> int:
        value = self.evaluate(bindings)
        return int(value) if value.denominator == 1 else round(float(value))

    def __eq__(self, other) -> bool:
        if isinstance(other, Size):
            other = Poly([other])
        return isinstance(other, Poly) and self.terms == other.terms

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        ordered = sorted(self.monomials(), key=lambda m: (-sum(e for _, e in m.powers), str(m)))
        return " + ".join(str(m) for m in ordered)

    def __repr__(self) -> str:
        return f"Poly({self})"
