"""The store's queries of the results view (core.store: query, frame, table_order,
changes, result_filter) against a real SQLite file and against SQLite's own ORDER BY, and
`tessera results --filter` reading the window's filter grammar."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from core.ir.serialize import read_document
from core.store import Store
from core.store.changes import StoreChanges
from core.store.frame import FrameChunk, ResultsFrame, read_chunk
from core.store.query import OrderQuery, only_ids, result_rows
from core.store.result_fields import RESULT_FIELDS
from core.store.result_filter import FilterError, ResultFilter, parse_filter
from core.store.table_order import TableOrder
from tests.support import EXAMPLES, command

KEYS = ("latency_ms", "flops", "accuracy")


@pytest.fixture
def store(tmp_path):
    """conv2d measured at 3, 2 and 1 ms, a search's shift_conv at 0.5 ms, grouped_conv not measured."""
    with Store(tmp_path / "results.db") as store:
        conv = store.add_operator(read_document(EXAMPLES / "conv2d.json"), "conv2d")
        shift = store.add_operator(read_document(EXAMPLES / "shift_conv.json"), "shift", "search:canvas")
        store.add_operator(read_document(EXAMPLES / "grouped_conv.json"), "grouped", "search:mcts")
        for latency in (3.0, 2.0, 1.0):
            store.add_measurement(conv, None, {"latency_ms": latency, "flops": 1e6, "bindings": {"C_in": 64}})
        store.add_measurement(shift, None, {"latency_ms": 0.5, "flops": 2e5, "bindings": {"C_in": 32}})
        yield store


def names(store: Store, text: str) -> list[tuple[str, float | None]]:
    where = parse_filter(text)
    return [(r["operator_name"], r["latency_ms"]) for r in store.results(where.where or None, where.args)]


def test_filter_terms_with_or_without_spaces_select_the_same_rows(store):
    expected = [("conv2d", 1.0), ("shift", 0.5)]
    for text in ("latency<2", "latency < 2", "latency <2", "latency< 2", "'latency < 2'"):
        assert names(store, text) == expected, text
    assert names(store, "latency >= 2 name ~ conv") == [("conv2d", 3.0), ("conv2d", 2.0)]
    assert names(store, "origin = search:mcts") == [("grouped", None)]
    assert names(store, "shift") == [("shift", 0.5)]  # a plain word searches the text columns
    assert names(store, "32") == [("shift", 0.5)]  # bindings are searched as text (C_in=32)


def test_filter_errors_name_the_term():
    assert parse_filter("") == ResultFilter() and not parse_filter("")
    where = parse_filter("conv latency<=2.5 origin=baseline tuned=yes name~sep")
    assert where.where.count(" AND ") == 4 and "latency_ms <= ?" in where.where and "origin = ?" in where.where
    assert list(where.args[-4:]) == [2.5, "baseline", 1, "%sep%"]
    with pytest.raises(FilterError, match="unknown column 'colour' in 'colour=red'; columns: .*latency"):
        parse_filter("colour = red")
    with pytest.raises(FilterError, match="tuned=yes or tuned=no"):
        parse_filter("tuned>1")
    with pytest.raises(FilterError, match="'speedup<fast': speedup is a number column"):
        parse_filter("speedup < fast")
    with pytest.raises(FilterError, match="a value is missing after '<'"):
        parse_filter("latency <")
    with pytest.raises(FilterError, match="cannot read the filter"):
        parse_filter("'open quote")
    assert parse_filter("'50%_done'").args[0] == "%50\\%\\_done%"  # LIKE wildcards match literally
    for field in RESULT_FIELDS:  # every name a user can type is a column
        for name in (field.key, *field.aliases):
            assert parse_filter(f"{name}~x").where.startswith(field.key)


def test_cli_results_filter_uses_the_same_grammar(store, capsys):
    path = str(store.path)
    assert command("results", "--filter", "latency < 2", "--json", "--store", path) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["operator_name"], r["latency_ms"]) for r in rows] == [("conv2d", 1.0), ("shift", 0.5)]
    assert command("results", "--filter", "name~conv", "--pareto", "latency_ms,flops", "--store", path) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:]] == ["conv2d"]
    assert command("results", "--filter", "latency > 100", "--store", path) == 0
    assert capsys.readouterr().out.strip() == "no results match the filter"
    with pytest.raises(FilterError, match="unknown column 'speed'"):
        command("results", "--filter", "speed>2", "--store", path)


def test_order_query_sorts_filters_and_reads_arrivals(store):
    everything = OrderQuery(ResultFilter(), "latency_ms", descending=False).read(store.db)
    rows = result_rows(store.db, everything.ids)
    assert [rows[i]["latency_ms"] for i in everything.ids] == [0.5, 1.0, 2.0, 3.0, None]  # no key last
    fast = OrderQuery(parse_filter("latency<2.5"), "operator_name", descending=True).read(store.db)
    assert [rows[i]["operator_name"] for i in fast.ids] == ["shift", "conv2d", "conv2d"]
    picked = only_ids(parse_filter("conv"), everything.ids[:2].tolist())
    ids, keys = OrderQuery(picked, "latency_ms", False, ids=tuple(everything.ids.tolist())).read(store.db)
    assert ids == [everything.ids[1]] and keys == [1.0]  # of the first two, only conv2d's 1 ms passes "conv"


def test_changes_read_only_what_changed(store, tmp_path):
    with Store(store.path) as other:  # another connection, as in the window's reader thread
        changes = StoreChanges(other.db, KEYS)
        assert changes.first and changes.changed()
        first = changes.results()
        assert first.reset and len(first.results) == 5 and not changes.first
        assert not changes.changed() and changes.results() is None
        grouped = next(r for r in store.results() if r["operator_name"] == "grouped")
        new = store.add_measurement(grouped["operator_id"], None, {"latency_ms": 0.7, "flops": 1e5})
        assert changes.changed()
        change = changes.results()
        assert not change.reset and change.results.ids.tolist() == [new]
        assert change.gone.tolist() == [-grouped["operator_id"]]  # its unmeasured row went away
        store.add_score(grouped["operator_id"], {"dataset": "digits", "backbone": "resnet18", "accuracy": 0.9})
        assert changes.changed() and changes.results().reset  # a score changes rows: everything again


def test_frame_keeps_rows_and_marks_the_gone():
    frame = ResultsFrame(KEYS)
    rng = np.random.default_rng(0)

    def chunk(ids, origin):
        return FrameChunk(
            np.array(ids, np.int64),
            [origin],
            np.zeros(len(ids), np.intp),
            {k: rng.random(len(ids)) for k in KEYS},
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
        doc = read_document(EXAMPLES / "conv2d.json")
        measured = store.add_operator(doc, "conv2d")
        shift = read_document(EXAMPLES / "shift_conv.json")
        waiting = store.add_operator(shift, "shift", "search:canvas")
        first = store.add_measurement(measured, None, {"latency_ms": 2.0, "flops": 1e6})
        second = store.add_measurement(measured, None, {"latency_ms": 1.0, "flops": 1e6})
        everything = read_chunk(store.db, KEYS)
        assert sorted(everything.ids.tolist()) == sorted([first, second, -waiting])
        newer = read_chunk(store.db, KEYS, "measurement_id > ?", [first])
        assert newer.ids.tolist() == [second] and newer.values["latency_ms"].tolist() == [1.0]
        unmeasured = read_chunk(store.db, KEYS, "measurement_id IS NULL")
        assert unmeasured.ids.tolist() == [-waiting] and np.isnan(unmeasured.values["latency_ms"]).all()
        assert [unmeasured.origin_names[i] for i in unmeasured.origin_index] == ["search:canvas"]


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
