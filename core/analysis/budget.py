"""Canvas's budget solver for dynamic variables left after shape matching.

Each remaining x gets a base value proportional to the channel count, C/8 rounded up to
the divisibility its uses need at every size it must be built at (x/G with G = 4 needs a
multiple of 4: with C = 16 the base is C/4, not C/8, whose 2 no group of 4 divides). Then
the variable whose doubling raises FLOPs least is doubled, again and again, while the
operator stays within the FLOPs/parameter caps. If even the base values exceed the caps,
or no base fits every size, the operator is discarded (None)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from ..ir.graph import OperatorGraph
from ..ir.symbolic import Size, VarKind, kind_of
from .shapes import infer_shapes, whole_sizes
from .solver import substitute

SMALLEST = -3  # a base is at least C/8
MAX_DOUBLINGS = 6


def base_values(
    graph: OperatorGraph, variables: list[str], channels: Size, binding_sets: Sequence[Mapping[str, int]]
) -> dict[str, Size] | None:
    """Each variable's base, channels * 2^e with the smallest e >= -3 that makes it a whole
    multiple of what its uses divide it by, at every one of `binding_sets`; None when no e up
    to the largest doubling does."""
    needs = _divisibility(graph, variables, binding_sets)
    bases = {}
    for v in variables:
        exponent = next(
            (
                e
                for e in range(SMALLEST, MAX_DOUBLINGS + 1)
                if all(_multiple(channels.evaluate(b) * Fraction(2) ** e, need) for b, need in needs[v])
            ),
            None,
        )
        if exponent is None:
            return None
        bases[v] = channels * Size(Fraction(2) ** exponent)
    return bases


def _multiple(value: Fraction, of: int) -> bool:
    return value.denominator == 1 and value.numerator % of == 0


def _divisibility(
    graph: OperatorGraph, variables: list[str], binding_sets: Sequence[Mapping[str, int]]
) -> dict[str, list[tuple[Mapping[str, int], int]]]:
    """Per variable and binding set, the number its value must be a multiple of: the lcm of
    the denominators left when a size using it (a shape, a group count, a weight's dimension)
    is divided by it, the other dynamic variables counted as 1 (they only multiply)."""
    report = infer_shapes(graph)
    kinds = graph.kinds()
    dynamic = {v: 1 for v in graph.mentioned_variables() if kind_of(v, kinds) is VarKind.DYNAMIC}
    sizes = [size for node in report.shapes for _, size in whole_sizes(graph, report, node)]
    needs: dict[str, list[tuple[Mapping[str, int], int]]] = {}
    for v in variables:
        rests = [s / Size.var(v) for s in sizes if s.exponent(v) == 1]
        needs[v] = [(b, math.lcm(1, *(r.evaluate({**b, **dynamic}).denominator for r in rests))) for b in binding_sets]
    return needs


def solve_budget(
    graph: OperatorGraph,
    bases: Mapping[str, Size],
    cost: Callable[[OperatorGraph], tuple[int, int] | None],
    within: Callable[[int, int], bool],
) -> tuple[OperatorGraph | None, str]:
    """Substitute each variable v by bases[v] * 2^k; `cost` gives (flops, params) or None if
    invalid. Returns (the graph, "") or (None, why: "invalid" or "over budget" at the bases)."""
    if not bases:
        return graph, ""
    variables = sorted(bases)
    exps = dict.fromkeys(variables, 0)

    def build(e: Mapping[str, int]) -> OperatorGraph:
        return substitute(graph, {v: bases[v] * Size(2**k) for v, k in e.items()})

    current = build(exps)
    now = cost(current)
    if now is None:
        return None, "invalid"
    if not within(*now):
        return None, "over budget"
    while True:
        options = []
        for v in variables:
            if exps[v] >= MAX_DOUBLINGS:
                continue
            trial = {**exps, v: exps[v] + 1}
            g = build(trial)
            c = cost(g)
            if c is not None and within(*c):
                options.append((c[0] - now[0], v, trial, g, c))
        if not options:
            return current, ""
        _, _, exps, current, now = min(options, key=lambda o: (o[0], o[1]))
