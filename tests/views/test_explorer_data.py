"""The explorer's Qt-free drawing pieces against brute force: the batch-by-batch Pareto
front, its staircase and marker thinning (the store's queries: tests/core/test_store_query.py)."""

from __future__ import annotations

import numpy as np
import pytest

from core.store import MAXIMIZE, MINIMIZE
from core.store.pareto import front_of, staircase
from core.store.plot_thinning import Thinning


def brute_front(x, y, directions) -> set[int]:
    cx = -x if directions[0] == MAXIMIZE else x
    cy = -y if directions[1] == MAXIMIZE else y
    return {
        i
        for i in range(len(x))
        if not any(cx[j] <= cx[i] and cy[j] <= cy[i] and (cx[j] < cx[i] or cy[j] < cy[i]) for j in range(len(x)))
    }


@pytest.mark.parametrize("directions", [(MINIMIZE, MINIMIZE), (MINIMIZE, MAXIMIZE), (MAXIMIZE, MINIMIZE)])
def test_front_batch_by_batch_equals_the_front_of_everything(directions):
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 30, 400).astype(float), rng.integers(0, 30, 400).astype(float)  # many ties
    front = np.empty(0, np.intp)
    for start in range(0, 400, 37):
        batch = np.arange(start, min(start + 37, 400))
        front = front_of(x, y, directions, np.concatenate([front, batch]))
        assert set(front.tolist()) == brute_front(x[: batch[-1] + 1], y[: batch[-1] + 1], directions)
        assert np.all(np.diff(x[front]) >= 0)


def test_staircase_bounds_the_dominated_region():
    xs, ys = np.array([1.0, 2.0, 4.0]), np.array([9.0, 5.0, 1.0])  # min x, min y
    sx, sy = staircase(xs, ys, MINIMIZE)
    assert list(zip(sx, sy)) == [(1, 9), (2, 9), (2, 5), (4, 5), (4, 1)]
    sx, sy = staircase(xs, -ys, MAXIMIZE)  # max x, min y: step first, then run
    assert list(zip(sx, sy)) == [(1, -9), (1, -5), (2, -5), (2, -1), (4, -1)]


def test_thinning_keeps_one_marker_per_occupied_cell_and_origin():
    rng = np.random.default_rng(1)
    n = 50_000
    x, y = rng.random(n), rng.random(n)
    groups = rng.integers(0, 3, n).astype(np.int16)
    thinning = Thinning(limit=3000, cell_px=3)
    drawn = thinning.full(x, y, groups, np.arange(n), (0, 1, 0, 1), (1 / 400, 1 / 300))
    assert len(drawn) <= 3000 and len(set(drawn.tolist())) == len(drawn)
    grid = thinning.grid
    keys, inside = grid.keys(x, y, groups)
    assert inside.all() and len(np.unique(keys)) == len(drawn)  # every occupied cell has its marker
    # a new batch only adds markers where cells (of its origin) were empty
    more_x, more_y = np.append(x, [0.5, 2.0]), np.append(y, [0.5, 0.5])
    more_groups = np.append(groups, [7, 0]).astype(np.int16)
    fresh = thinning.extend(more_x, more_y, more_groups, np.array([n, n + 1]))
    assert fresh.tolist() == [n]  # a new origin in a cell; the other lies outside the grid
