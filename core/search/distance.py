"""Shape distance (Syno): a lower bound on how many more primitives a frontier needs to
reach the input shape. Partial chains whose distance exceeds the remaining budget are
pruned, so it must never over-estimate, or operators are lost.

Every step adds or removes at most one axis, so each axis of either shape costs one step
on its own. A reshape group pairs some frontier axes with some input axes: equal total
sizes take #lhs + #rhs - 2 steps (splits and merges only), unequal ones #lhs + #rhs - 1 (one
1-to-many primitive), so a group saves 2 or 1 steps over its axes on their own. The
synthesizer's size-changing views (unfold, stride) act on spatial axes: a group of channel
axes only whose sizes differ needs an axis added or removed (expand, reduce, a share's new
axis), each a step of an axis on its own, so it saves nothing. Sizes with
different primary variables cannot be turned into each other, so a group's sizes may only
differ by coefficients (K, s). The distance is the number of axes minus the largest saving
over all grouping schemes: each input axis either stands alone or leads a group with any
other input axes and frontier axes left. Repeated axes are tried in every assignment, which
is what finding one expand for [C_in, C_in, H, W] needs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import lru_cache
from itertools import combinations

from ..ir.symbolic import VarKind, kind_of
from ..ir.tensor import Dim, TensorType

#: an axis's size as its coefficient, its exponents over the variables of both shapes (sorted
#: by name) and a bit mask of the primary variables among them, and whether it is spatial:
#: products are sums of exponents, much cheaper than Size arithmetic on this hot path
Axis = tuple[int | Fraction, tuple[int, ...], int, bool]


def shape_distance(frontier: TensorType, target: TensorType, kinds: Mapping[str, VarKind]) -> int:
    return ShapeDistance(target, kinds, {v for d in frontier for v in d.size.variables})(frontier)


class ShapeDistance:
    """The shape distance to one input shape from many frontiers, over the variables of that
    shape and `variables`: each axis is turned into an Axis once, and the grouping search is
    remembered by the frontier's useful axes as a multiset (`_saving`). A search asks for
    thousands of frontiers, most of them axes already seen in another order."""

    def __init__(self, target: TensorType, kinds: Mapping[str, VarKind], variables: Iterable[str] = ()):
        self.kinds = kinds
        self.names = sorted({v for d in target for v in d.size.variables} | set(variables))
        self._index = {v: i for i, v in enumerate(self.names)}
        self._primary = [kind_of(v, kinds) is VarKind.PRIMARY for v in self.names]
        self._axes: dict[Dim, Axis] = {}
        self.target = target
        self._right = tuple(sorted(a for a in map(self._axis, target) if a is not None))
        self._wanted = _mask(self._right)

    def __call__(self, frontier: TensorType) -> int:
        axes = [self._axis(d) for d in frontier]
        if None in axes:  # a variable it was not told of
            more = {v for d in frontier for v in d.size.variables}
            return ShapeDistance(self.target, self.kinds, [*self.names, *more])(frontier)
        # an axis with a primary variable the input lacks (C_out) can only be removed on its own
        useful = tuple(sorted(a for a in axes if a is not None and a[2] & ~self._wanted == 0))
        return len(frontier) + len(self.target) - _saving(useful, self._right)

    def _axis(self, d: Dim) -> Axis | None:
        axis = self._axes.get(d)
        if axis is None:
            powers = dict(d.size.powers)
            if not powers.keys() <= self._index.keys():
                return None
            exps = tuple(powers.get(v, 0) for v in self.names)
            coef = d.size.coef.numerator if d.size.coef.denominator == 1 else d.size.coef
            mask = sum(1 << i for i, e in enumerate(exps) if e and self._primary[i])
            axis = self._axes[d] = (coef, exps, mask, d.spatial)
        return axis


@lru_cache(maxsize=65536)
def _saving(lhs: tuple[Axis, ...], rhs: tuple[Axis, ...]) -> int:
    """The largest saving of any grouping of these axes; the first input axis stands alone or
    leads a group with some other input axes and some frontier axes whose primary variables
    it covers (primaries never sit in a denominator, so no other axis can join)."""
    if not lhs or not rhs:
        return 0
    lead, others = rhs[0], rhs[1:]
    best = _saving(lhs, others)
    for k in range(len(others) + 1):
        for extra in _distinct_subsets(others, k):
            right = (lead, *extra)
            covered = _mask(right)
            eligible = tuple(a for a in lhs if a[2] & ~covered == 0)
            rest_rhs = _without(others, extra)
            coef_r, exps_r = _product(right)
            for j in range(1, len(eligible) + 1):
                for left in _distinct_subsets(eligible, j):
                    coef_l, exps_l = _product(left)
                    if any(a != b for i, (a, b) in enumerate(zip(exps_l, exps_r)) if covered >> i & 1):
                        continue  # the sizes differ in a primary variable
                    if coef_l == coef_r and exps_l == exps_r:
                        gain = 2
                    elif any(a[3] for a in (*left, *right)):
                        gain = 1
                    else:
                        continue  # channel axes of different sizes
                    if gain + 2 * min(len(lhs) - j, len(rest_rhs)) <= best:
                        continue
                    best = max(best, gain + _saving(_without(lhs, left), rest_rhs))
    return best


def _mask(axes) -> int:
    out = 0
    for a in axes:
        out |= a[2]
    return out


def _distinct_subsets(axes: tuple[Axis, ...], k: int) -> set[tuple[Axis, ...]]:
    """Subsets of k axes by size (axes come sorted): repeated sizes are interchangeable."""
    return set(combinations(axes, k))


def _without(axes: tuple[Axis, ...], taken: tuple[Axis, ...]) -> tuple[Axis, ...]:
    rest = list(axes)
    for a in taken:
        rest.remove(a)
    return tuple(rest)


def _product(axes: tuple[Axis, ...]) -> tuple[int | Fraction, tuple[int, ...]]:
    coef, exps = axes[0][0], axes[0][1]
    for a in axes[1:]:
        coef, exps = coef * a[0], tuple(x + y for x, y in zip(exps, a[1]))
    return coef, exps
