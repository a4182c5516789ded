"""Pareto fronts in pure numpy, apart from any plotting.

A row dominates another if it is at least as good in every column and better in
one. Identical rows never dominate each other, so duplicates of a front point
are all on the front.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MINIMIZE = "min"
MAXIMIZE = "max"


def pareto_front(values: np.ndarray, directions: Sequence[str]) -> np.ndarray:
    """Indices (ascending) of the non-dominated rows of an (N, k) array.

    `directions[j]` is "min" or "max" for column j. O(N log N) for k = 2 (one sort
    and running minima); for k >= 3, O(N * front size), vectorised. NaN is refused (a missing value has no place on a front).
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[1] != len(directions):
        raise ValueError(
            f"expected an (N, {len(directions)}) array for {len(directions)} directions, got shape {values.shape}"
        )
    bad = [d for d in directions if d not in (MINIMIZE, MAXIMIZE)]
    if bad:
        raise ValueError(f"direction must be {MINIMIZE!r} or {MAXIMIZE!r}, got {bad[0]!r}")
    if np.isnan(values).any():
        raise ValueError("values contain NaN")
    if len(values) == 0:
        return np.empty(0, dtype=np.intp)
    costs = [-values[:, j] if d == MAXIMIZE else values[:, j] for j, d in enumerate(directions)]
    if len(costs) == 2:
        return _front_2d(*costs)
    return _front_nd(np.column_stack(costs))


def _front_2d(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Sort by x and group equal x. A point is on the front iff its y is the least of its
    group (a smaller y at the same x dominates it) and that least y is below every y of
    the groups before (a smaller x with y' <= y dominates it). The first group's least
    points are always on the front, even at y = inf."""
    order = np.argsort(x)
    xs, ys = x[order], y[order]
    new_group = np.empty(len(xs), dtype=bool)
    new_group[0] = True
    np.not_equal(xs[1:], xs[:-1], out=new_group[1:])
    group = np.cumsum(new_group) - 1
    least = np.minimum.reduceat(ys, np.flatnonzero(new_group))
    group_on_front = np.ones(len(least), dtype=bool)
    group_on_front[1:] = least[1:] < np.minimum.accumulate(least)[:-1]
    on_front = group_on_front[group] & (ys == least[group])
    return np.sort(order[on_front])


def _front_nd(costs: np.ndarray) -> np.ndarray:
    """Visit candidates by increasing sum of costs (a row that dominates another has the
    smaller sum, so it comes first); each visited candidate drops, vectorised, every
    candidate it dominates. Rows equal to it stay: identical rows never dominate."""
    with np.errstate(invalid="ignore"):  # inf + -inf: such rows are merely visited late
        candidates = np.argsort(costs.sum(axis=1))
    i = 0
    while i < len(candidates):
        rest = costs[candidates]
        survives = (rest < rest[i]).any(axis=1) | (rest == rest[i]).all(axis=1)
        candidates = candidates[survives]
        i = int(survives[:i].sum()) + 1
    return np.sort(candidates)
