"""Canvas's budget solver for dynamic variables left after shape matching.

Each remaining x gets a base value proportional to the channel count (here
C_in / 8, rounded up to the divisibility its uses need) and then the variable
whose doubling raises FLOPs least is doubled, again and again, while the
operator stays within the FLOPs/parameter caps. If even the base values exceed
the caps the operator is discarded (None)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..ir.graph import OperatorGraph
from ..ir.symbolic import Size, parse_size
from .solver import substitute

BASE = parse_size("C_in/8")
MAX_DOUBLINGS = 6


def solve_budget(
    graph: OperatorGraph,
    variables: list[str],
    cost: Callable[[OperatorGraph], tuple[int, int] | None],
    within: Callable[[int, int], bool],
    base: Size = BASE,
) -> OperatorGraph | None:
    """Substitute `variables` by base * 2^k; `cost` gives (flops, params) or None if invalid."""
    if not variables:
        return graph
    exps = dict.fromkeys(variables, 0)

    def build(e: Mapping[str, int]) -> OperatorGraph:
        return substitute(graph, {v: base * Size(2**k) for v, k in e.items()})

    current = build(exps)
    now = cost(current)
    if now is None or not within(*now):
        return None
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
            return current
        _, _, exps, current, now = min(options, key=lambda o: (o[0], o[1]))
