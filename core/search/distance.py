"""Shape distance (Syno): how many more primitives a frontier needs, at least
roughly, to reach the input shape. Partial chains whose distance exceeds the
remaining budget are pruned.

Both shapes are split into reshape groups: axes sharing a primary variable
belong together (union-find over primary variables). A group with equal total
size needs #lhs + #rhs - 2 steps (splits and merges only), otherwise
#lhs + #rhs - 1 (one 1-to-many primitive). A group with no input axis (e.g.
C_out, which only a weight provides) costs one step per axis; an input axis
whose variable is missing from the frontier costs one step (a reduce creates
it); an axis with no primary variable (K) costs one step (an unfold or a
reduce) unless joining a group is cheaper, e.g. [C_in/K, K] is one split away from
[C_in]: every such assignment is tried. Grouping by variables makes permutations
of repeated axes irrelevant."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

from ..ir.symbolic import Size, VarKind, kind_of
from ..ir.tensor import TensorType


def _primaries(size: Size, kinds) -> set[str]:
    return {v for v in size.variables if kind_of(v, kinds) is VarKind.PRIMARY}


def shape_distance(frontier: TensorType, target: TensorType, kinds: Mapping[str, VarKind]) -> int:
    parent: dict[str, str] = {}

    def find(v: str) -> str:
        while parent.setdefault(v, v) != v:
            v = parent[v]
        return v

    def union(vs: set[str]) -> None:
        vs = list(vs)
        for v in vs[1:]:
            parent[find(v)] = find(vs[0])

    lhs = [(_primaries(d.size, kinds), d.size) for d in frontier]
    rhs = [(_primaries(d.size, kinds), d.size) for d in target]
    for vs, _ in lhs + rhs:
        if vs:
            union(vs)
    groups: dict[str, list[list[Size]]] = {}
    free: list[Size] = []  # K-like axes of the frontier
    for side, dims in ((0, lhs), (1, rhs)):
        for vs, size in dims:
            if vs:
                groups.setdefault(find(next(iter(vs))), [[], []])[side].append(size)
            elif side == 0:
                free.append(size)
    base = len(free) + sum(_group_cost(left, right) for left, right in groups.values())
    best = base
    # a K-like axis can only help a group whose sizes it makes equal; try those joins
    for left, right in groups.values():
        if not right or not left:
            continue
        missing = _product(right) / _product(left)
        for count in range(1, len(free) + 1):
            for chosen in set(combinations(sorted(free, key=str), count)):
                if _product(list(chosen)) == missing:
                    joined = _group_cost(left + list(chosen), right) - _group_cost(left, right) - count
                    best = min(best, base + joined)
    return best


def _group_cost(left: list[Size], right: list[Size]) -> int:
    if not right:
        return len(left)
    if not left:
        return len(right)
    if _product(left) == _product(right):
        return len(left) + len(right) - 2
    return len(left) + len(right) - 1


def _product(sizes: list[Size]) -> Size:
    out = Size(1)
    for s in sizes:
        out = out * s
    return out
