"""Coordinate expressions of a chain (Syno's view of an operator), built bottom-up.

Syno reads an operator as index expressions: every output coordinate and every reduction
variable map to one input coordinate and one coordinate per weight. Two chains with the
same expressions (up to renaming reduction variables, the weights' axes and the weights'
order, and what the weights absorb: `absorbed`) compute the same function, the set of maps
over all weights, so `Algebra.key` is a canonical form: it merges equal search states
(MCTS's transposition table) and counts duplicates. Building the expressions applies Syno's
term rewriting (`[(C*i+j)/(B*C), (C*i+j)%(B*C)] -> [i/B, C*(i%B)+j]`, rolls composing, ...).
A rewrite that fires means a simpler chain computes the same thing, so it is recorded by
name for the canonicalization rules; rewrites that hold only when a split factor is much
larger than the small sizes added to it (Syno's approximate rules) are recorded apart.

Expressions are tuples: ("v", name, size), ("+", ((coef, expr), ...)), ("/", e, D),
("%", e, D), ("roll", e, shift, N) ((e + shift) mod N), ("win", x, k, N) (x + k - K//2
for a window k of K, zero outside the axis of N)."""

from __future__ import annotations

import itertools
from collections import Counter
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
            w = weight_coords((*lead, *(rest[d] for d in step.get("dims"))))
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
            d, b = step.get("dim"), as_size(step.get("B"))
            q, r = c[d], c[d + 1]
            if q == ("/", r[1], b) and r == ("%", q[1], b):  # [e / B, e % B] merged back: e
                if not any(_contains(x, q) or _contains(x, r) for w in weights for x in w):
                    fired.append("split_of_merge")  # a weight reading one digit ties entries: no rewrite then
                c[d : d + 2] = [q[1]]
            else:
                c[d : d + 2] = [lin([(b, q), (ONE, r)])]
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
        """Rolls of one axis compose into one expression; only rolls that cancel are redundant
        (a roll by 2 is two shifts, the only chain that makes it)."""
        if e[0] == "roll" and e[3] == n:
            e, shift = e[1], e[2] + shift
            if shift == 0:
                fired.append("rolls_cancel")
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
        """Canonical form: the coordinates and the weights as they absorb each other
        (`absorbed`), reduction variables renamed in an order that does not depend on their
        names (by where they are read; variables read alike are tried in every order, the least
        form kept). Equal forms compute the same functions, the weights chosen to suit."""
        blind = {r[1]: "r?" for r in state.reduced}
        weights = absorbed(state.coords, state.weights, blind)
        read = sorted({n for e in (*state.coords, *(x for w in weights for x in w)) for n in _reductions(e, blind)})

        def context(name: str) -> tuple:
            """Where a reduction is read, with every reduction but it blind."""
            mark = {**blind, name: "r*"}
            at = [(i, repr(rename(e, mark))) for i, e in enumerate(state.coords) if name in _reductions(e, blind)]
            inside = [
                repr(sorted(repr(rename(x, mark)) for x in w))
                for w in weights
                if any(name in _reductions(x, blind) for x in w)
            ]
            return (tuple(at), tuple(sorted(inside)))

        contexts = {name: context(name) for name in read}
        ordered = sorted(read, key=contexts.__getitem__)
        groups = [list(g) for _, g in itertools.groupby(ordered, key=contexts.__getitem__)]
        forms = []
        for order in itertools.product(*(itertools.permutations(g) for g in groups)):
            names = {n: f"r{i}" for i, n in enumerate(n for g in order for n in g)}
            coords = tuple(rename(e, names) for e in state.coords)
            forms.append((coords, tuple(sorted(repr(weight_coords(rename(x, names) for x in w)) for w in weights))))
        return forms[0] if len(forms) == 1 else min(forms, key=repr)


def digits(e: Expr) -> tuple[Expr, ...]:
    """The digits of a mixed-radix coordinate: b*q + r with r < b indexes what [q, r] does, one
    to one (c*t alone is t); any other coordinate is itself."""
    if e[0] != "+":
        return (e,)
    for c, t in e[1]:
        rest = tuple(x for x in e[1] if x != (c, t))
        below = mixed_radix(rest)
        if below is not None and fits(below, c):
            return (*digits(t), *(digits(lin(rest)) if rest else ()))
    return (e,)


def weight_coords(axes) -> tuple[Expr, ...]:
    """A weight's coordinates up to a one-to-one relabelling of the entries it reads, which
    changes no function it can express: a mixed-radix coordinate is its digits, the digits
    [e / B, e % B] together are e, and a coordinate read twice is one. Sorted, without repeats."""
    out = {d for e in axes for d in digits(e)}
    pair = next((q for q in out if q[0] == "/" and ("%", q[1], q[2]) in out), None)
    while pair is not None:
        out -= {pair, ("%", pair[1], pair[2])}
        out |= set(digits(pair[1]))
        pair = next((q for q in out if q[0] == "/" and ("%", q[1], q[2]) in out), None)
    return tuple(sorted(out, key=repr))


def absorbed(coords: tuple[Expr, ...], weights, reductions: Mapping[str, str]) -> list[tuple[Expr, ...]]:
    """The weights up to what they absorb, which changes no function the operator can compute
    for some weights: a coordinate made only of reductions read nowhere else sums the weight
    over them (any weight of its other coordinates is such a sum; an expanded axis summed is
    the case with no weight), and a weight whose coordinates another weight also has is
    absorbed by that one (their product is any weight of the larger), which also merges
    repeated weights. Repeated until nothing changes."""
    ws = {weight_coords(w) for w in weights}
    while True:
        reads = Counter(n for e in (*coords, *(x for w in ws for x in w)) for n in _reductions(e, reductions))
        kept = {tuple(x for x in w if not _summed(x, reads, reductions)) for w in ws}
        kept = {w for w in kept if w and not any(set(w) < set(v) for v in kept)}
        if kept == ws:
            return sorted(ws, key=repr)
        ws = kept


def _summed(e: Expr, reads: Counter, reductions: Mapping[str, str]) -> bool:
    """Whether a coordinate is made only of reductions read nowhere else."""
    return all(n in reductions and reads[n] == k for n, k in Counter(_names(e)).items())


def _names(e: Expr):
    """Every variable an expression reads, once per read."""
    tag = e[0]
    if tag == "v":
        yield e[1]
    elif tag == "+":
        for _, t in e[1]:
            yield from _names(t)
    elif tag == "win":
        yield from _names(e[1])
        yield from _names(e[2])
    else:
        yield from _names(e[1])


def _contains(e: Expr, part: Expr) -> bool:
    if e == part:
        return True
    if e[0] == "v":
        return False
    if e[0] == "+":
        return any(_contains(t, part) for _, t in e[1])
    if e[0] == "win":
        return _contains(e[1], part) or _contains(e[2], part)
    return _contains(e[1], part)


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
    return (n for n in _names(e) if n in blind)
