"""What a discovery run shows while it runs: the stage tiles with the rarer outcomes on one line
(too slow among them), and a best speedup whose timing is in doubt said to be so."""

from __future__ import annotations

from views.search.discovery_status import StageCounts, best_text


def test_the_rarer_outcomes_are_counted_under_the_tiles(qtbot):
    counts = StageCounts()
    qtbot.addWidget(counts)
    counts.show_counts({"proposed": 40, "trained": 30, "too slow": 7, "diverged": 1})
    assert counts.numbers["proposed"].text() == "40" and counts.numbers["trained"].text() == "30"
    assert "7 too slow" in counts.others.text() and "1 diverged" in counts.others.text()


def test_a_best_speedup_timed_on_a_busy_machine_says_so():
    best = {"name": "mcts-1", "accuracy": 0.96, "e2e_speedup": 2.5, "note": ""}
    assert best_text({"best": best}, tune=True) == (
        "Best so far: mcts-1, 2.50x faster end to end than the tuned original at 96.0% accuracy."
    )
    doubtful = best_text({"best": {**best, "note": "unreliable: runs spread by 60%"}}, tune=True)
    assert doubtful.endswith("Timing in doubt (unreliable: runs spread by 60%): time it again on a quiet machine.")
