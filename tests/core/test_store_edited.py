"""A real store file whose values were changed outside Tessera (by hand in an SQLite browser,
or by another program): JSON that no longer parses is named by table, row and column, and
text in a numeric column reads as missing, so no command, report or view fails on it."""

from __future__ import annotations

import math
import sqlite3

import pytest

from app.cli import main
from core.ir.serialize import read_document
from core.jobs.queue import JobQueue
from core.store import Store, StoreError
from core.store.frame import read_chunk
from core.store.query import result_rows
from core.store.searches import candidates, open_run, runs


def _edit(path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


@pytest.fixture
def store_path(tmp_path, examples_dir):
    path = tmp_path / "edited.db"
    with Store(path) as store:
        op = store.add_operator(read_document(examples_dir / "conv2d.json"), "conv2d")
        store.add_score(op, {"dataset": "digits", "backbone": "resnet18", "accuracy": 0.9, "test_accuracy": 0.88})
        JobQueue(store).submit("measure", {"operator_id": op}, operator_id=op)
        open_run(store, "key", "a run", {"template": {}})
    return path


def test_json_that_no_longer_parses_is_named_by_table_row_and_column(store_path, capsys):
    _edit(
        store_path,
        "UPDATE searches SET config = '{\"strategy\": ' WHERE id = 1",
        "UPDATE jobs SET payload = 'not json' WHERE id = 1",
        "UPDATE operators SET document = '[1, 2' WHERE id = 1",
    )
    with Store(store_path) as store:
        with pytest.raises(StoreError, match=r"searches row 1 holds no valid JSON \(.*\) in its config column"):
            runs(store)
        with pytest.raises(StoreError, match=r"jobs row 1 holds no valid JSON \(.*\) in its payload column"):
            JobQueue(store).jobs()
        with pytest.raises(StoreError, match=r"operators row 1 holds no valid JSON \(.*\) in its document column"):
            store.operator(1)
    assert main(["jobs", "list", "--store", str(store_path)]) == 1
    assert (
        "jobs row 1 holds no valid JSON (Expecting value: line 1 column 1 (char 0)) in its payload column"
        in capsys.readouterr().err
    )


def test_a_run_whose_test_accuracies_are_no_list_of_numbers_is_refused_by_name(store_path):
    for stored in ("5", '["high", 0.9]'):
        _edit(store_path, f"UPDATE searches SET baseline_test = '{stored}' WHERE id = 1")
        with Store(store_path) as store, pytest.raises(StoreError, match="searches row 1 holds no list of accuracies"):
            runs(store)


def test_text_in_a_numeric_column_reads_as_missing(store_path, capsys):
    _edit(
        store_path,
        "UPDATE scores SET test_accuracy = 'eighty', accuracy = '0.9x'",
        "UPDATE searches SET baseline_accuracy = 'n/a'",
        "INSERT INTO search_candidates (search_id, operator_id, stage, accuracy, test_accuracy) "
        "VALUES (1, 1, 'tested', 'high', 0.5)",
    )
    with Store(store_path) as store:
        (row,) = store.results()
        assert row["test_accuracy"] is None and row["accuracy"] is None and row["flops"] > 0
        assert result_rows(store.db, [-1])[-1]["test_accuracy"] is None
        chunk = read_chunk(store.db, ["accuracy", "flops"])
        assert math.isnan(chunk.values["accuracy"][0]) and chunk.values["flops"][0] > 0
        (run,) = runs(store)
        (candidate,) = candidates(store, run)
        assert run.baseline_accuracy is None and candidate["accuracy"] is None and candidate["test_accuracy"] == 0.5
    assert main(["results", "--json", "--store", str(store_path)]) == 0
    assert '"test_accuracy": null' in capsys.readouterr().out
