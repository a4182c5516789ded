"""The explorer's Qt-free data pieces against brute force: the batch-by-batch Pareto front,
its staircase, marker thinning, the results frame, and the reader over a real store."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from core.ir.serialize import read_document
from core.store import MAXIMIZE, MINIMIZE, Store
from views.explorer.columns import FRAME_COLUMNS
from views.explorer.frame import FrameChunk, ResultsFrame, read_chunk
from views.explorer.front import front_of, staircase
from views.explorer.table_order import TableOrder
from views.explorer.thinning import Thinning
from views.theme import RESOURCES


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


def test_frame_keeps_rows_and_marks_the_gone():
    frame = ResultsFrame()
    rng = np.random.default_rng(0)

    def chunk(ids, origin):
        return FrameChunk(
            np.array(ids, np.int64),
            [origin],
            np.zeros(len(ids), np.intp),
            {k: rng.random(len(ids)) for k in FRAME_COLUMNS},
        )

    frame.replace(chunk([1, 2, 3, -7], "hand-made"))
    added = frame.append(chunk([4, 5, -8], "search:mcts"))
    assert (added.start, added.stop) == (4, 7) and frame.origins == ["hand-made", "search:mcts"]
    assert frame.positions([5, -7, 99]).tolist() == [5, 3]
    assert frame.kill([-7]).tolist() == [3]
    assert frame.positions([-7]).tolist() == [] and frame.count == 6
    assert frame.origin_counts() == {"hand-made": 3, "search:mcts": 3}


def test_read_chunk_ids_measurements_and_unmeasured_operators(tmp_path):
    with Store(tmp_path / "results.db") as store:
        doc = read_document(RESOURCES / "examples" / "conv2d.json")
        measured = store.add_operator(doc, "conv2d")
        shift = read_document(RESOURCES / "examples" / "shift_conv.json")
        waiting = store.add_operator(shift, "shift", "search:random")
        first = store.add_measurement(measured, None, {"latency_ms": 2.0, "flops": 1e6})
        second = store.add_measurement(measured, None, {"latency_ms": 1.0, "flops": 1e6})
        everything = read_chunk(store.db)
        assert sorted(everything.ids.tolist()) == sorted([first, second, -waiting])
        newer = read_chunk(store.db, "measurement_id > ?", [first])
        assert newer.ids.tolist() == [second] and newer.values["latency_ms"].tolist() == [1.0]
        unmeasured = read_chunk(store.db, "measurement_id IS NULL")
        assert unmeasured.ids.tolist() == [-waiting] and np.isnan(unmeasured.values["latency_ms"]).all()
        assert [unmeasured.origin_names[i] for i in unmeasured.origin_index] == ["search:random"]


@pytest.mark.parametrize("numeric", [True, False])
@pytest.mark.parametrize("descending", [False, True])
def test_table_order_puts_arrivals_where_sqlite_sorts_them(numeric, descending):
    """Rows arriving later end where SQLite's ORDER BY key IS NULL, key DIR, id DIR puts them."""
    rng = np.random.default_rng(5)
    n = 300
    if numeric:
        keys = [None if v < 0.15 else float(round(v * 20)) for v in rng.random(n)]  # nulls and ties
    else:
        keys = [None if v < 0.15 else f"op-{int(v * 30)}" for v in rng.random(n)]
    ids = rng.permutation(np.arange(-40, n - 40) + (np.arange(n) >= 40)).tolist()  # negative ids too
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER, k)")
    db.executemany("INSERT INTO t VALUES (?, ?)", list(zip(ids, keys)))
    direction = "DESC" if descending else "ASC"

    def sql_order(where: str) -> list[tuple]:
        return db.execute(f"SELECT id, k FROM t {where} ORDER BY k IS NULL, k {direction}, id {direction}").fetchall()

    first = sql_order("WHERE rowid <= 200")
    order = TableOrder([r[0] for r in first], [r[1] for r in first], numeric, descending)
    for start in range(200, n, 23):
        batch = list(zip(ids, keys))[start : start + 23]
        order, at = order.inserted([i for i, _ in batch], [k for _, k in batch])
        assert sorted(order.ids[at].tolist()) == sorted(i for i, _ in batch)  # where the new rows went
    assert order.ids.tolist() == [r[0] for r in sql_order("")]
    assert order.inserted(ids[:5], keys[:5])[0] is order  # nothing new
    gone = order.removed(ids[::2])
    assert gone.ids.tolist() == [r[0] for r in sql_order("WHERE rowid % 2 = 0")]
