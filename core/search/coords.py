"""Coordinate expressions of a chain (Syno's view of an operator), built bottom-up.

Syno reads an operator as index expressions: every output coordinate and every reduction
variable map to one input coordinate and one coordinate per weight. Two chains with the
same expressions (up to renaming reduction variables, the weights' axes and the weights'
order) compute the same function, so `Algebra.key` is a canonical form: it merges equal
search states (MCTS's transposition table) and counts duplicates. Building the expressions
applies Syno's term rewriting (`[(C*i+j)/(B*C), (C*i+j)%(B*C)] -> [i/B, C*(i%B)+j]`, rolls
composing, ...). A rewrite that fires means a simpler chain computes the same thing, so it
is recorded by name for the canonicalization rules; rewrites that hold only when a split
factor is much larger than the small sizes added to it (Syno's approximate rules) are
recorded apart.

Expressions are tuples: ("v", name, size), ("+", ((coef, expr), ...)), ("/", e, D),
("%", e, D), ("roll", e, shift, N), ("win", x, k, K) (x + k - K//2, zero outside the axis)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ir.symbolic import Size, VarKind, as_size, kind_of
from ..ir.tensor import TensorType
from .chain import Step

Expr = tuple[Any, ...]
ONE = Size(1)


def fits(small: Size, big: Size) -> bool:
    """small <= big for every binding: big/small has a whole coefficient and no variable in
    its denominator (sizes are >= 1)."""
    q = big / small
    return q.coef.denominator == 1 and all(e > 0 for _, e in q.powers)


def var(name: str, size: Size) -> Expr:
    return ("v", name, size)


def terms_of(e: Expr) -> tuple[tuple[Size, Expr], ...]:
    return e[1] if e[0] == "+" else ((ONE, e),)


def lin(terms) -> Expr:
    """A sum of coef * expr, flattened, like terms merged; a lone term of coefficient 1 is itself."""
    merged: dict[tuple, Size] = {}
    for coef, t in terms:
        for c, u in terms_of(t):
            c = coef * c
            k = (u, c.powers)
            merged[k] = Size(merged[k].coef + c.coef, c.powers) if k in merged else c
    items = tuple(sorted(((c, u) for (u, _), c in merged.items() if c.coef), key=repr))
    return items[0][1] if len(items) == 1 and items[0][0] == ONE else ("+", items)


def bound(e: Expr) -> Size | None:
    """An exclusive upper bound of a non-negative expression, when one monomial proves it."""
    tag = e[0]
    if tag == "v":
        return e[2]
    if tag == "%":
        return e[2]
    if tag == "roll":
        return e[3]
    if tag == "win":
        return bound(e[1])
    if tag == "/":
        inner = bound(e[1])
        return None if inner is None else inner / e[2]
    return mixed_radix(e[1])


def mixed_radix(terms) -> Size | None:
    """Bound of sum(c * t) when the terms nest like digits: the largest coefficient C holds
    every other term below it (rest < C), and then the sum is below C * bound(its term)."""
    if not terms:
        return ONE
    if len(terms) == 1:
        c, t = terms[0]
        b = bound(t)
        return None if b is None else c * b
    for i, (c, t) in enumerate(terms):
        rest = terms[:i] + terms[i + 1 :]
        inner = mixed_radix(rest)
        b = bound(t)
        if inner is not None and b is not None and fits(inner, c):
            return c * b
    return None


@dataclass(frozen=True)
class Coords:
    """The expressions of the frontier's coordinates, the weights' coordinates so far, the
    reduction variables, and the rewrites that fired while building them."""

    coords: tuple[Expr, ...]
    weights: tuple[tuple[Expr, ...], ...] = ()
    reduced: tuple[Expr, ...] = ()
    rewrites: tuple[str, ...] = ()
    approximate: tuple[str, ...] = ()


class Algebra:
    """Applies chain steps bottom-up to Coords; `kinds` tells small (coefficient) sizes apart."""

    def __init__(self, kinds: Mapping[str, VarKind]):
        self.kinds = dict(kinds)

    def start(self, output: TensorType) -> Coords:
        return Coords(tuple(var(f"o{i}", d.size) for i, d in enumerate(output)))

    def apply(self, state: Coords, step: Step, before: TensorType) -> Coords:
        """The state one step closer to the input: `before` is the frontier the step needs."""
        c, op = list(state.coords), step.op
        fired: list[str] = []
        approx: list[str] = []
        weights, reduced = state.weights, state.reduced
        if op == "reduce":
            d = step.get("dim")
            r = var(f"r{len(reduced)}", before[d].size)
            c.insert(d, r)
            reduced = (*reduced, r)
        elif op == "share":
            out = step.get("out")
            lead, rest = (c[:1], c[1:]) if out not in (None, "") else ([], c)
            w = tuple(sorted((*lead, *(rest[d] for d in step.get("dims"))), key=repr))
            if w in weights:
                fired.append("same_weight")
            weights, c = (*weights, w), rest
        elif op == "unfold":
            first = next(i for i, d in enumerate(before) if d.spatial)
            k = c.pop(first)
            d = step.get("dim")
            if c[d] in reduced:
                fired.append("window_reduced")
            c[d] = ("win", c[d], k, before[d].size)
        elif op == "split":
            d = step.get("dim")
            c[d : d + 2] = [lin([(as_size(step.get("B")), c[d]), (ONE, c[d + 1])])]
        elif op == "merge":
            d = step.get("dim")
            c[d : d + 1] = self.divmod(c[d], before[d + 1].size, fired, approx)
        elif op == "shift":
            d = step.get("dim")
            c[d] = self.roll(c[d], -step.get("amount"), before[d].size, fired)
        elif op == "expand":
            dropped = c.pop(step.get("dim"))
            if dropped in reduced:
                fired.append("expand_reduced")
        elif op == "stride":
            d = step.get("dim")
            c[d] = lin([(as_size(step.get("S")), c[d])])
        else:
            raise ValueError(f"no coordinate rule for {op}")
        return Coords(tuple(c), weights, reduced, (*state.rewrites, *fired), (*state.approximate, *approx))

    def roll(self, e: Expr, shift: int, n: Size, fired: list[str]) -> Expr:
        if e[0] == "roll" and e[3] == n:
            fired.append("rolls_compose")
            e, shift = e[1], e[2] + shift
        return e if shift == 0 else ("roll", e, shift, n)

    def divmod(self, e: Expr, b: Size, fired: list[str], approx: list[str]) -> list[Expr]:
        """[e / b, e % b] with Syno's rewrites: e = b*q + r with r < b gives [q, r]; e = C*i + j
        with j < C and b = m*C gives [i/m, C*(i%m) + j]. Approximately, when the part of r
        that overflows b is small (coefficient sizes) and b is large (has a primary variable)."""
        terms = terms_of(e)
        for c, t in terms:
            rest = [x for x in terms if x != (c, t)]
            below = mixed_radix(tuple(rest))
            if c == b and below is not None and fits(below, b):
                fired.append("merge_of_split")
                return [t, lin(rest)]
            if rest and c != b and c != ONE and fits(c, b) and below is not None and fits(below, c):
                m = b / c
                fired.append("merge_of_split")
                return [("/", t, m), lin([(c, ("%", t, m)), *rest])]
            if c == b and self._small_overflow(rest, b):
                approx.append("merge_of_split_approx")
                return [t, lin(rest)]
        return [("/", e, b), ("%", e, b)]

    def _small_overflow(self, rest, b: Size) -> bool:
        large = [x for x in rest if not self._small(x[0] * (bound(x[1]) or b))]
        small = len(rest) - len(large)
        below = mixed_radix(tuple(large))
        big = any(kind_of(v, self.kinds) is VarKind.PRIMARY for v in b.variables)
        return bool(small and big and below is not None and fits(below, b))

    def _small(self, size: Size) -> bool:
        return all(kind_of(v, self.kinds) is VarKind.COEFFICIENT for v in size.variables)

    def key(self, state: Coords) -> tuple:
        """Canonical form: reduction variables renamed by first use (coordinates, then the
        weights in a name-blind order), weights sorted, unused reductions kept by size."""
        names: dict[str, str] = {}
        blind = {r[1]: "r?" for r in state.reduced}
        order = [*state.coords, *sorted((e for w in state.weights for e in w), key=lambda e: repr(rename(e, blind)))]
        for e in order:
            for name in _reductions(e, blind):
                names.setdefault(name, f"r{len(names)}")
        unused = tuple(sorted(repr(r[2]) for r in state.reduced if r[1] not in names))
        coords = tuple(rename(e, names) for e in state.coords)
        weights = sorted(repr(tuple(sorted((rename(e, names) for e in w), key=repr))) for w in state.weights)
        return (coords, tuple(weights), unused)


def rename(e: Expr, names: Mapping[str, str]) -> Expr:
    tag = e[0]
    if tag == "v":
        return ("v", names.get(e[1], e[1]), e[2])
    if tag == "+":
        return lin([(c, rename(t, names)) for c, t in e[1]])
    if tag == "win":
        return ("win", rename(e[1], names), rename(e[2], names), e[3])
    return (tag, rename(e[1], names), *e[2:])


def _reductions(e: Expr, blind: Mapping[str, str]):
    tag = e[0]
    if tag == "v":
        if e[1] in blind:
            yield e[1]
    elif tag == "+":
        for _, t in e[1]:
            yield from _reductions(t, blind)
    elif tag == "win":
        yield from _reductions(e[1], blind)
        yield from _reductions(e[2], blind)
    else:
        yield from _reductions(e[1], blind)
