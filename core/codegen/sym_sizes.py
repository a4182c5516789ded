"""Sizes that remember what they are made of, for shape-generic torch code.

The torch templates (torch_ops, torch_layers, conv_spec, einsum_chain, window_product) work
on integers. Handed `SymInt`s instead, integers that also carry an expression over the
operator's variables, they print that expression wherever they print a size: one generation
pass gives code that reads `x.reshape(n, self.G, self.in_channels // self.G, H, W)` where
it read `x.reshape(n, 4, 16, 56, 56)`, with no second set of templates.

A template also compares sizes to choose what to write (a reshape left out where the shape
does not change, a padding written only for a window wider than one). Each comparison is
decided at the sizes being generated and checked at sample sizes; one whose answer can change
is recorded as a `Guard`, a condition the generated module checks before running. Exact
divisions the templates make (a group count read off a weight) are recorded too, so the
module refuses sizes at which they are not whole. Importing this module imports no torch."""

from __future__ import annotations

import contextlib
import contextvars
import operator
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partialmethod

from ..ir.symbolic import Size

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "//": 2, "%": 2}
_APPLY: dict[str, Callable] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "//": lambda a, b: Fraction(a // b),
    "%": lambda a, b: Fraction(a % b),
}


@dataclass(frozen=True)
class Expr:
    """A size expression: a monomial (`size`), or `op` applied to two expressions."""

    size: Size | None = None
    op: str = ""
    args: tuple[Expr, ...] = ()

    def evaluate(self, values: Mapping[str, int]) -> Fraction:
        if self.size is not None:
            return self.size.evaluate(values)
        a, b = (e.evaluate(values) for e in self.args)
        return _APPLY[self.op](a, b)

    def python(self, name: Callable[[str], str]) -> str:
        """Python text computing it, variables written by `name`."""
        if self.size is not None:
            return _monomial(self.size, name)
        a, b = self.args
        left, right = a.python(name), b.python(name)
        if _precedence(a) < _PRECEDENCE[self.op]:
            left = f"({left})"
        if _precedence(b) <= _PRECEDENCE[self.op]:
            right = f"({right})"
        return f"{left} {self.op} {right}"

    @property
    def variables(self) -> set[str]:
        if self.size is not None:
            return self.size.variables
        return set().union(*(e.variables for e in self.args))


def _precedence(e: Expr) -> int:
    if e.size is None:
        return _PRECEDENCE[e.op]
    s = e.size
    if s.is_constant() and s.coef.denominator == 1:
        return 9
    return 9 if len(s.powers) == 1 and s.powers[0][1] == 1 and s.coef == 1 else 2


def _monomial(size: Size, name: Callable[[str], str]) -> str:
    """coef * a * b ** 2 // c: whole wherever the module's checks pass (see Trace.whole)."""
    num, den = size.factors(name, " ** ")
    text = " * ".join(num)
    if den:
        text += " // " + (den[0] if len(den) == 1 else f"({' * '.join(den)})")
    return text


def _expr(value) -> Expr:
    return value.expr if isinstance(value, SymInt) else Expr(Size(int(value)))


@dataclass(frozen=True)
class Guard:
    """A comparison the generated code depends on: `left op right` held where it was generated."""

    left: Expr
    op: str  # ==, !=, <, <=, >, >=
    right: Expr

    @property
    def variables(self) -> set[str]:
        return self.left.variables | self.right.variables

    def python(self, name: Callable[[str], str]) -> str:
        return f"{self.left.python(name)} {self.op} {self.right.python(name)}"

    def holds(self, values: Mapping[str, int]) -> bool:
        return _COMPARE[self.op](self.left.evaluate(values), self.right.evaluate(values))


def negation(guard: Guard) -> Guard:
    return Guard(guard.left, _NEGATION[guard.op], guard.right)


@dataclass
class Trace:
    """What one generation pass depends on. `samples`: other sizes of the operator's variables,
    at which a comparison that the generated code depends on must come out as it did."""

    samples: list[dict[str, int]]
    guards: list[Guard] = field(default_factory=list)
    whole: list[Size] = field(default_factory=list)  # exact divisions made by templates
    names: Callable[[str], str] = str

    def decide(self, left: SymInt | int, op: str, right: SymInt | int, result: bool) -> bool:
        a, b = _expr(left), _expr(right)
        compare = _COMPARE[op]
        try:
            constant = all(compare(a.evaluate(s), b.evaluate(s)) == result for s in self.samples)
        except ZeroDivisionError:
            constant = False
        if not constant:
            guard = Guard(a, op, b) if result else Guard(a, _NEGATION[op], b)
            if guard not in self.guards:
                self.guards.append(guard)
        return result


_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_NEGATION = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_TRACE: contextvars.ContextVar[Trace | None] = contextvars.ContextVar("tessera_size_trace", default=None)


@contextlib.contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    token = _TRACE.set(trace)
    try:
        yield trace
    finally:
        _TRACE.reset(token)


@contextlib.contextmanager
def operator_names() -> Iterator[None]:
    """While it lasts, sizes print over the operator's own variables (C_in, K), not the
    module's attributes: for comments."""
    trace = _TRACE.get()
    if trace is None:
        yield
        return
    names, trace.names = trace.names, str
    try:
        yield
    finally:
        trace.names = names


def sample_values(values: Mapping[str, int], primary: set[str], count: int = 12, seed: int = 0) -> list[dict[str, int]]:
    """Other valid-looking sizes: every coefficient drawn from 1 to 8, every primary size its
    own value times a random factor and the new coefficients (so that what they divide stays
    whole)."""
    rng = random.Random(seed)
    samples = []
    for _ in range(count):
        coefficients = {k: rng.randint(1, 8) for k in values if k not in primary}
        scale = 1
        for v in coefficients.values():
            scale *= v
        samples.append({**coefficients, **{k: values[k] * rng.randint(1, 9) * scale for k in values if k in primary}})
    return samples


class SymInt(int):
    """An int that carries the expression it stands for (see the module docstring)."""

    expr: Expr

    def __new__(cls, value: int, expr: Expr) -> SymInt:
        self = super().__new__(cls, value)
        self.expr = expr
        return self

    @classmethod
    def of(cls, value: int, size: Size) -> SymInt:
        return cls(value, Expr(size))

    def __str__(self) -> str:
        trace = _TRACE.get()
        return self.expr.python(trace.names if trace else str)

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return str(self) if not spec else int(self).__format__(spec)

    def _binary(self, other, op: str, swap: bool = False):
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if swap else (self, other)
        value = int(_APPLY[op](Fraction(int(a)), Fraction(int(b))))
        exact = op == "//" and int(b) != 0 and int(a) % int(b) == 0
        return SymInt(value, _combine(_expr(a), op, _expr(b), exact))

    __add__ = partialmethod(_binary, op="+")
    __radd__ = partialmethod(_binary, op="+", swap=True)
    __sub__ = partialmethod(_binary, op="-")
    __rsub__ = partialmethod(_binary, op="-", swap=True)
    __mul__ = partialmethod(_binary, op="*")
    __rmul__ = partialmethod(_binary, op="*", swap=True)
    __floordiv__ = partialmethod(_binary, op="//")
    __rfloordiv__ = partialmethod(_binary, op="//", swap=True)
    __mod__ = partialmethod(_binary, op="%")
    __rmod__ = partialmethod(_binary, op="%", swap=True)

    def __neg__(self):
        return SymInt(-int(self), _combine(Expr(Size(0)), "-", self.expr))

    def _compare(self, other, op: str):
        if not isinstance(other, int):
            return NotImplemented
        result = _COMPARE[op](int(self), int(other))
        trace = _TRACE.get()
        return trace.decide(self, op, other, result) if trace else result

    __eq__ = partialmethod(_compare, op="==")
    __ne__ = partialmethod(_compare, op="!=")
    __lt__ = partialmethod(_compare, op="<")
    __le__ = partialmethod(_compare, op="<=")
    __gt__ = partialmethod(_compare, op=">")
    __ge__ = partialmethod(_compare, op=">=")

    def __bool__(self) -> bool:
        return self._compare(0, "!=")

    __hash__ = int.__hash__


def _combine(a: Expr, op: str, b: Expr, exact: bool = False) -> Expr:
    """`a op b`, kept a monomial where it is one: products, and exact quotients (recorded for
    the module to check where they have a variable in the denominator)."""
    if a.size is not None and b.size is not None:
        x, y = a.size, b.size
        if op == "*":
            return Expr(x * y)
        if op == "//" and exact:
            q = x / y
            if q.denominator() == Size(1) or not q.denominator().is_constant():
                trace = _TRACE.get()
                if trace is not None and q.denominator() != Size(1) and q not in trace.whole:
                    trace.whole.append(q)
                return Expr(q)
        if op in "+-" and x.powers == y.powers:
            coef = x.coef + y.coef if op == "+" else x.coef - y.coef
            if coef >= 0 or x.is_constant():
                return Expr(Size(coef, x.powers if coef else ()))
    if op in "+-" and b.size is not None and b.size.coef == 0:
        return a
    return Expr(None, op, (a, b))
