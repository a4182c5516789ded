"""Shape distance (Syno): a lower bound on how many more primitives a frontier needs to
reach the input shape. Partial chains whose distance exceeds the remaining budget are
pruned, so it must never over-estimate, or operators are lost.

Every step adds or removes at most one axis, so each axis of either shape costs one step
on its own. A reshape group pairs some frontier axes with some input axes: equal total
sizes take #lhs + #rhs - 2 steps (splits and merges only), unequal ones #lhs + #rhs - 1 (one
1-to-many primitive), so a group saves 2 or 1 steps over its axes on their own. Sizes with
different primary variables cannot be turned into each other, so a group's sizes may only
differ by coefficients (K, s). The distance is the number of axes minus the largest saving
over all grouping schemes: each input axis either stands alone or leads a group with any
other input axes and frontier axes left. Repeated axes are tried in every assignment, which
is what finding one expand for [C_in, C_in, H, W] needs."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from itertools import combinations

from ..ir.symbolic import Size, VarKind, kind_of
from ..ir.tensor import TensorType


def shape_distance(frontier: TensorType, target: TensorType, kinds: Mapping[str, VarKind]) -> int:
    lhs, rhs = frontier.sizes, target.sizes
    names = frozenset(v for s in (*lhs, *rhs) for v in s.variables if kind_of(v, kinds) is VarKind.PRIMARY)
    wanted = frozenset(v for s in rhs for v in s.variables) & names
    # an axis with a primary variable the input lacks (C_out) can only be removed on its own
    useful = tuple(s for s in lhs if s.variables & names <= wanted)
    return len(lhs) + len(rhs) - _saving(_sorted(useful), _sorted(rhs), names)


@lru_cache(maxsize=65536)
def _saving(lhs: tuple[Size, ...], rhs: tuple[Size, ...], primaries: frozenset[str]) -> int:
    """The largest saving of any grouping of these axes; the first input axis stands alone or
    leads a group with some other input axes and some frontier axes whose primary variables
    it covers (primaries never sit in a denominator, so no other axis can join)."""
    if not lhs or not rhs:
        return 0
    lead, others = rhs[0], rhs[1:]
    best = _saving(lhs, others, primaries)
    for k in range(len(others) + 1):
        for extra in _distinct_subsets(others, k):
            right = (lead, *extra)
            covered = frozenset(v for s in right for v in s.variables) & primaries
            eligible = tuple(s for s in lhs if s.variables & primaries <= covered)
            rest_rhs = _without(others, extra)
            for j in range(1, len(eligible) + 1):
                for left in _distinct_subsets(eligible, j):
                    ratio = _product(left) / _product(right)
                    if ratio.variables & covered:
                        continue
                    gain = 2 if ratio == Size(1) else 1
                    if gain + 2 * min(len(lhs) - j, len(rest_rhs)) <= best:
                        continue
                    best = max(best, gain + _saving(_without(lhs, left), rest_rhs, primaries))
    return best


def _sorted(sizes) -> tuple[Size, ...]:
    return tuple(sorted(sizes, key=str))


def _distinct_subsets(sizes: tuple[Size, ...], k: int) -> set[tuple[Size, ...]]:
    """Subsets of k axes by size (sizes come sorted): repeated sizes are interchangeable."""
    return set(combinations(sizes, k))


def _without(sizes: tuple[Size, ...], taken: tuple[Size, ...]) -> tuple[Size, ...]:
    rest = list(sizes)
    for s in taken:
        rest.remove(s)
    return tuple(rest)


def _product(sizes: tuple[Size, ...]) -> Size:
    out = Size(1)
    for s in sizes:
        out = out * s
    return out
