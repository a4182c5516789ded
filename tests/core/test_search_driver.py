"""The search driver and `tessera search`: candidates land in a real store with their origin."""

import json

import pytest

from core.analysis.legality import check_sequence
from core.codegen.loopnest_ir import result_operator
from core.ir.sequence import sequence_from_document
from core.ir.serialize import content_hash
from core.search.base import SearchError
from core.search.driver import run_search
from core.search.settings import SearchConfig
from core.store import Store
from tests.support import EXAMPLES

CONV = json.loads((EXAMPLES / "conv2d.json").read_text())


def test_canvas_search_writes_candidates_and_queues_measurements(tmp_path):
    db = tmp_path / "r.db"
    seen = []
    summary = run_search(
        {
            "template": CONV,
            "strategy": "canvas",
            "samples": 5,
            "tune_trials": 0,
            "measure_bindings": {"C_in": 16, "C_out": 16, "H": 8, "W": 8},
        },
        str(db),
        progress=lambda f, m: seen.append(f),
    )
    assert summary.found == 5 and seen[-1] == 1.0
    with Store(db) as store:
        rows = list(store.results())
        assert len(rows) == 5 and {r["origin"] for r in rows} == {"search:canvas"}
        assert all(r["flops"] > 0 for r in rows)
        jobs = store.db.execute(
            "SELECT j.kind, j.payload, d.name FROM jobs AS j JOIN devices AS d ON d.id = j.device_id"
        )
        jobs = jobs.fetchall()
    assert summary.queued + len(summary.failures) == 5 and len(jobs) == summary.queued
    assert all(
        kind == "measure" and json.loads(p)["bindings"]["C_in"] == 16 and device == "local" for kind, p, device in jobs
    )


def test_sequence_search_keeps_each_candidates_sequence_with_it(tmp_path):
    db = tmp_path / "s.db"
    assert run_search({"template": CONV, "strategy": "sequences", "samples": 4}, str(db)).found == 4
    with Store(db) as store:
        ids = [r["operator_id"] for r in store.results()]
        assert len(ids) == 4
        for operator_id in ids:
            seq = sequence_from_document(store.operator_sequence(operator_id))
            again = result_operator(check_sequence(seq).final, "again").graph
            assert content_hash(again) == store.operator(operator_id)["hash"]


def test_mcts_runs_the_windows_default_search_of_300_operators(tmp_path):
    """The Search panel's defaults on conv2d: two of MCTS's states once had weights whose
    canonical keys could be ordered only by comparing symbolic sizes, and the job failed
    (TypeError) before storing its candidates."""
    summary = run_search({"template": CONV, "strategy": "mcts", "samples": 300}, str(tmp_path / "r.db"))
    assert summary.found == 300


def test_search_can_be_cancelled_and_rerun_without_duplicates(tmp_path):
    db = tmp_path / "r.db"
    calls = iter(range(100))
    summary = run_search(
        {"template": CONV, "strategy": "mcts", "samples": 50}, str(db), cancelled=lambda: next(calls) >= 3
    )
    assert summary.found == 3
    run_search({"template": CONV, "strategy": "mcts", "samples": 3}, str(db))  # same seed: same operators
    with Store(db) as store:
        assert store.db["operators"].count == 3


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"strategy": "genetic"}, "strategy must be one of canvas, mcts, random, sequences"),
        ({"evaluate": "vibes"}, "evaluate must be one of none, fisher, train"),
        ({"samples": None, "minutes": None}, "give a number of samples or a time limit"),
        ({"budget_flops": -1}, "budget_flops must be a positive number"),
        ({"colour": "red"}, "the search settings has unknown field(s) 'colour'"),
        ({"samples": "ten"}, "the search settings: samples must be a whole number, got 'ten'"),
    ],
)
def test_bad_settings_are_refused_clearly(bad, message):
    with pytest.raises(SearchError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SearchConfig.from_dict({"template": CONV, **bad})


@pytest.mark.slow
def test_search_with_fisher_scores_candidates(tmp_path):
    db = tmp_path / "r.db"
    summary = run_search(
        {
            "template": CONV,
            "strategy": "canvas",
            "samples": 2,
            "evaluate": "fisher",
            "evaluation": {"width": 8, "resolution": 8, "limit": 200, "fisher_batch": 16},
        },
        str(db),
    )
    assert summary.scored + len(summary.failures) == 2 and summary.scored >= 1
    with Store(db) as store:
        scored = [r for r in store.results() if r["fisher_potential"] is not None]
        assert len(scored) == summary.scored and all(r["fisher_potential"] > 0 for r in scored)
