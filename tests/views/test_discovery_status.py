"""What a discovery run shows while it runs: the stage tiles with the rarer outcomes on one line
(too slow among them), a best speedup whose timing is in doubt said to be so, and the best beside
its references with the headline they give."""

from __future__ import annotations

from core.search.discovery import summarize
from core.store import Store
from tests.views.discovery_data import held_out, run_with_references
from views.search.discovery_status import StageCounts, baseline_text, best_text, references_text


def test_the_rarer_outcomes_are_counted_under_the_tiles(qtbot):
    counts = StageCounts()
    qtbot.addWidget(counts)
    counts.show_counts({"proposed": 40, "trained": 30, "too slow": 7, "diverged": 1})
    assert counts.numbers["proposed"].text() == "40" and counts.numbers["trained"].text() == "30"
    assert "7 too slow" in counts.others.text() and "1 diverged" in counts.others.text()


def test_a_best_speedup_timed_on_a_busy_machine_says_so():
    best = {
        "name": "mcts-1",
        "accuracy": 0.96,
        "e2e_speedup": 2.5,
        "note": "",
        "selected_from": 40,
        "test": None,
        "timed_alone": True,
    }
    assert best_text({"best": best}, tune=True) == (
        "Best of 40 so far: mcts-1, 2.50x faster end to end than the tuned original, selected at 96.0% "
        "validation accuracy."
    )
    doubtful = best_text({"best": {**best, "note": "unreliable: runs spread by 60%"}}, tune=True)
    assert doubtful.endswith("Timing in doubt (unreliable: runs spread by 60%): time it again on a quiet machine.")


def test_the_best_and_the_original_are_reported_on_the_test_split_apart_from_their_selection():
    test = {"accuracy": 0.951, "std": 0.004, "difference": -0.003, "low": -0.009, "high": 0.004}
    verdict = "within 1 point: the 95% interval of the difference, -0.9 to +0.4 points, lies above -1"
    best = {"name": "mcts-1", "accuracy": 0.96, "e2e_speedup": 2.5, "note": "", "selected_from": 40, "timed_alone": 1}
    text = best_text({"best": {**best, "test": {**test, "verdict": verdict}}}, tune=True)
    assert text.endswith(f"On the test split: 95.1%, -0.3 points against the original seed by seed; {verdict}.")
    summary = {"baseline_accuracy": 0.97, "baseline_test": (0.95, 0.96, None)}
    assert baseline_text(summary) == (
        "The original network: 97.0% proxy (validation) accuracy; 0.955 +- 0.007 (2 seeds) on the test split."
    )


def test_the_best_is_shown_beside_its_references_with_the_headline(tmp_path):
    with Store(tmp_path / "s.db") as store:
        cfg, run, _ = run_with_references(store, held_out(-0.003, -0.008, 0.002), 2.75)
        summary = summarize(store, run, cfg, 1.0, {})
    lines = references_text(summary).splitlines()
    assert lines[0] == "Beside its references:"
    assert lines[1].startswith("• mcts-1 (survivor): test 0.948 +- 0.004, -0.2 points [-0.6, +0.2]; 235.3 MFLOPs")
    assert [line.split(" (")[0].split(":")[0] for line in lines[2:5]] == [
        "• the original",
        "• resnet18 narrowed",
        "• depthwise_separable",
    ]
    assert lines[6] == (
        "No speedup at equal accuracy: resnet18 narrowed (x0.438 trained, x0.453 timed) is as accurate and 1.10x "
        "faster."
    )
    assert references_text({"best": None}) == ""
