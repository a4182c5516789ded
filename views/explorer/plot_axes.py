"""The Pareto plot's axes: the pair shown until the user picks one, where a value lies on a
linear or logarithmic axis, and how far the view may go on it."""

from __future__ import annotations

import math

import numpy as np

from ..result_columns import BY_KEY, Column

NO_LIMIT = 1e307  # a view limit that limits nothing (pyqtgraph's default)
#: axes shown until the user picks some: the first if any result has both (tuned end-to-end
#: results), else the pair with the most results (the first of equals)
DEFAULT_AXES = (
    ("e2e_speedup", "accuracy"),
    ("latency_ms", "accuracy"),
    ("latency_ms", "fisher_potential"),
    ("latency_ms", "flops"),
    ("flops", "accuracy"),
    ("flops", "fisher_potential"),
    ("flops", "params"),
)
SPEEDUPS_FOR_DEFAULT = 3  # results with accuracy and a tuned speedup before those axes are the default


def default_axes(counts: np.ndarray, current: tuple[str, str]) -> tuple[str, str]:
    """Accuracy against tuned end-to-end speedup once a few results have both (a front of
    one point answers nothing); before that the pair of DEFAULT_AXES that shows the most
    results (`counts`, of count_pairs; the `current` pair if none shows any)."""
    if counts[0] >= SPEEDUPS_FOR_DEFAULT:
        return DEFAULT_AXES[0]
    return DEFAULT_AXES[int(np.argmax(counts))] if counts.any() else current


def count_pairs(values: dict[str, np.ndarray], rows) -> np.ndarray:
    """How many of the frame's `rows` each pair of DEFAULT_AXES would show (at its own scales)."""
    return np.array(
        [
            np.count_nonzero(
                np.isfinite(coords(values[x][rows], BY_KEY[x].log))
                & np.isfinite(coords(values[y][rows], BY_KEY[y].log))
            )
            for x, y in DEFAULT_AXES
        ]
    )


def coords(values: np.ndarray, log: bool) -> np.ndarray:
    """Plot coordinates: the values, or their log10 (NaN where not > 0)."""
    if not log:
        return values.astype(float, copy=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values > 0, np.log10(values), np.nan)


def view_limits(column: Column, log: bool) -> tuple[float, float]:
    """How far the view may go on an axis of `column`: within its bounds (accuracy 0..1);
    NO_LIMIT, pyqtgraph's own default, elsewhere."""
    low, high = column.bounds or (-NO_LIMIT, NO_LIMIT)
    if log:
        return -NO_LIMIT, (math.log10(high) if 0 < high < NO_LIMIT else NO_LIMIT)
    return low, high
