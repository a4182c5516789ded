"""The Pareto front drawn on the plot: kept up to date batch by batch, and as a staircase.

Adding points never brings a dominated point back, so the front of old and new points
is the front of (old front + new points): a batch costs O(front + batch), not O(N)."""

from __future__ import annotations

import numpy as np

from core.store import MAXIMIZE, pareto_front


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
