"""Pareto fronts in pure numpy, apart from any plotting: the front of a table, a front kept up
to date batch by batch, and its staircase; which results may stand on a front at all.

A row dominates another if it is at least as good in every column and better in
one. Identical rows never dominate each other, so duplicates of a front point
are all on the front. Adding points never brings a dominated point back, so the front of
old and new points is the front of (old front + new points): a batch costs O(front + batch).

A ranking never uses a number that is in doubt: where an objective comes from timing a kernel
(TIMED_OBJECTIVES), a result whose timing is in doubt (the results view's `in_doubt`) is left
off the front unless the user asks for it (`reliable`).
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


#: objectives read from timing a kernel: a result whose timing is in doubt has no place on their fronts
TIMED_OBJECTIVES = frozenset({"latency_ms", "latency_std_ms", "gflops", "torch_latency_ms", "speedup"})


def reliable(columns: Sequence[str]) -> str:
    """The SQL condition (on the results view) that keeps only results whose figures in
    `columns` can be ranked: not in doubt where a column is timed; "" when none is."""
    return "COALESCE(in_doubt, 0) = 0" if TIMED_OBJECTIVES.intersection(columns) else ""


def front_of(x: np.ndarray, y: np.ndarray, directions: tuple[str, str], candidates: np.ndarray) -> np.ndarray:
    """Indices among `candidates` (indices into x and y, all finite there) that no other
    candidate dominates, sorted by x."""
    candidates = np.asarray(candidates, dtype=np.intp)
    if candidates.size == 0:
        return candidates
    on_front = candidates[pareto_front(np.column_stack([x[candidates], y[candidates]]), directions)]
    return on_front[np.argsort(x[on_front], kind="stable")]


def staircase(xs: np.ndarray, ys: np.ndarray, x_direction: str) -> tuple[np.ndarray, np.ndarray]:
    """The boundary of the region the front points (sorted by x) dominate, as a polyline.

    With x minimised, each point's region reaches right, so the line runs right from a
    point and then steps to the next one's y; with x maximised it steps first, then runs."""
    if len(xs) < 2:
        return np.asarray(xs, float), np.asarray(ys, float)
    n = len(xs)
    sx, sy = np.empty(2 * n - 1), np.empty(2 * n - 1)
    sx[0::2], sy[0::2] = xs, ys
    if x_direction == MAXIMIZE:
        sx[1::2], sy[1::2] = xs[:-1], ys[1:]
    else:
        sx[1::2], sy[1::2] = xs[1:], ys[:-1]
    return sx, sy
