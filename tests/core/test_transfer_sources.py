"""Source selection for transfer-tuning: Gibson's heuristic on hand-computed numbers, and
what counts as a source (a folder tree, a results store's tuning folders). No TVM here."""

from __future__ import annotations

import math

import pytest

from core.compile.errors import CompileError
from core.compile.transfer_sources import WORKLOADS, open_source, payload_sources, rank_sources, source_score
from core.ir.serialize import read_document
from core.jobs.queue import JobQueue
from core.store import Store

# untuned time of the target network per kernel class: P = 0.6, 0.3, 0.1
UNTUNED = {"conv": 60.0, "depthwise": 30.0, "dense": 10.0}


def test_score_is_the_sum_of_squared_shares_times_root_of_tuned_kernels():
    # 0.6^2 * sqrt(4) + 0.3^2 * sqrt(0) + 0.1^2 * sqrt(9) = 0.72 + 0 + 0.03
    assert source_score(UNTUNED, {"conv": 4, "dense": 9}) == pytest.approx(0.75)
    # 0.6^2 * sqrt(1) + 0.3^2 * sqrt(16) = 0.36 + 0.36; classes the target lacks do not count
    assert source_score(UNTUNED, {"conv": 1, "depthwise": 16, "pool": 100}) == pytest.approx(0.72)
    assert source_score(UNTUNED, {}) == 0.0
    assert source_score({}, {"conv": 3}) == 0.0


def test_ranking_prefers_covering_where_the_time_goes_with_diminishing_returns():
    candidates = {"X": {"conv": 4, "dense": 9}, "Y": {"conv": 1, "depthwise": 16}, "Z": {"depthwise": 100}}
    ranked = rank_sources(UNTUNED, candidates)
    assert [name for name, _ in ranked] == ["Z", "X", "Y"]  # Z: 0.09 * 10 = 0.9
    assert ranked[0][1] == pytest.approx(0.9)
    # one class only (a single operator): P = 1, so the score is sqrt(|W|)
    assert rank_sources({"conv": 2.0}, {"a": {"conv": 9}, "b": {"conv": 16}}) == [("b", 4.0), ("a", 3.0)]
    # ties keep the order the candidates were given in
    assert [n for n, _ in rank_sources({"conv": 1.0}, {"p": {"conv": 4}, "q": {"conv": 4}})] == ["p", "q"]
    assert math.isclose(source_score({"c": 1.0, "d": 3.0}, {"c": 4}), 0.25**2 * 2)


def _database(folder):
    folder.mkdir(parents=True)
    (folder / WORKLOADS).write_text("")
    return folder


def test_a_folder_source_holds_every_database_under_it(tmp_path):
    one = _database(tmp_path / "local" / "abc-C_in=4")
    two = _database(tmp_path / "local" / "backbone-resnet18-w8-r16")
    (tmp_path / "local" / "empty").mkdir()
    source = open_source(tmp_path)
    assert source.name == str(tmp_path) and source.folders == (one, two)


def test_a_store_source_holds_the_tuning_folders_of_its_finished_jobs(tmp_path, examples_dir):
    tuned = _database(tmp_path / "tuning" / "local" / "abc")
    path = tmp_path / "results.db"
    with Store(path) as store:
        operator = store.add_operator(read_document(examples_dir / "conv2d.json"), "conv2d")
        queue = JobQueue(store)
        for folder in (tuned, tmp_path / "gone", None):
            queue.submit("measure", {"bindings": {}}, operator_id=operator)
            job = queue.claim(["measure"])
            result = {"latency_ms": 1.0, "schedule_source": "tuned"}
            if folder is not None:
                result["tuning_dir"] = str(folder)
            assert queue.complete(job, result)
        queue.submit("measure", {}, operator_id=operator)  # still queued: not a source
    assert open_source(path).folders == (tuned,)


def test_sources_of_a_payload_and_clear_errors(tmp_path):
    missing = tmp_path / "nothing-here"
    assert payload_sources(None, missing)[0].folders == ()  # no tuning yet: nothing to reuse
    with pytest.raises(CompileError, match="nothing-here: no such tuning folder or results store"):
        payload_sources([str(missing)], tmp_path)
    with pytest.raises(CompileError, match="sources must be a non-empty list"):
        payload_sources("a/folder", tmp_path)
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    with pytest.raises(CompileError, match="junk.db: not a results store"):
        open_source(junk)
