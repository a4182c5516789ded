"""What a discovery run shows while it runs: the stage tiles with the rarer outcomes on one line
(too slow and the undecided verdicts among them), and the report (core.search.report, the one
renderer the command line prints too): a speedup whose timing is in doubt never ranked and said to be so,
the verdicts counted with undecided apart, and the best beside its references with the
headline they give."""

from __future__ import annotations

from dataclasses import replace

from core.ir.serialize import read_document
from core.search.references import NARROWED
from core.search.report import best_text, ended_text, headline, original_text, report, time_text, verdicts_text
from core.search.stages import Phase
from core.search.summary import summarize
from core.store import Store
from core.store.searches import references as reference_rows
from core.store.searches import set_baseline_test, set_stage
from tests.support import EXAMPLES
from tests.views.discovery_data import held_out, run_with_references
from views.search.discovery_status import StageCounts


def summary_of(tmp_path, narrowed_speedup: float = 2.75, phase: Phase = Phase.PROPOSING):
    with Store(tmp_path / "s.db") as store:
        cfg, run, _ = run_with_references(store, held_out(-0.003, -0.008, 0.002), narrowed_speedup)
        run = set_baseline_test(store, run, [0.95, 0.96, None])
        return summarize(store, run, cfg, phase, seconds=53.6, spent=40.0)


def test_the_rarer_outcomes_are_counted_under_the_tiles(qtbot):
    counts = StageCounts()
    qtbot.addWidget(counts)
    counts.show_counts({"proposed": 40, "trained": 30, "too slow": 7, "diverged": 1, "undecided": 2})
    assert counts.numbers["proposed"].text() == "40" and counts.numbers["trained"].text() == "30"
    assert "7 too slow" in counts.others.text() and "1 diverged" in counts.others.text()
    assert "2 undecided" in counts.others.text()


def test_a_speedup_in_doubt_is_never_ranked_and_is_said_to_be_in_doubt(tmp_path):
    """A faster survivor whose timing is in doubt is listed apart, not chosen; with only such
    survivors there is no best; a narrowed original in doubt gives no headline."""
    doubt = "the speedup over the original's 95% interval is wider than +-12%: 9 [0.6, 34.5]"
    with Store(tmp_path / "s.db") as store:
        cfg, run, row = run_with_references(store, held_out(-0.003, -0.008, 0.002), 2.75)
        faster = store.add_operator(read_document(EXAMPLES / "involution.json"), "mcts-2", "search:mcts")
        test = held_out(-0.001, -0.004, 0.002)
        set_stage(store, run, faster, "tuned", e2e_speedup=9.0, e2e_latency_ms=1.1, accuracy=0.97, **test, detail=doubt)
        summary = summarize(store, run, cfg, Phase.PROPOSING)
        assert summary.best is not None and summary.best.survivor.name == "mcts-1"
        assert best_text(summary).startswith(
            "Best of 2 judged: mcts-1 (operator 1), 2.50x faster end to end than the tuned original (4.00 ms tuned; "
            "timed alone), selected at 96.0% validation accuracy. On the test split: within 1 point after 3 seeds"
        )
        assert best_text(summary).endswith(
            f"Not ranked, timing in doubt: mcts-2 (operator {faster}, 9.00x: {doubt}); time them again on a "
            "quiet machine."
        )
        narrowed = next(r for r in reference_rows(store, run) if r["reference"] == NARROWED)
        set_stage(store, run, narrowed["operator_id"], "tuned", detail="timing it alone failed (cancelled)")
        assert headline(summarize(store, run, cfg, Phase.PROPOSING).best, cfg.margin).startswith(
            "no headline yet: the timing of resnet18 narrowed (x0.438 trained, x0.453 timed)'s (timing it alone "
            "failed (cancelled)) is in doubt"
        )
        set_stage(store, run, row["operator_id"], "tuned", detail="timing it alone failed (cancelled)")
        alone = summarize(store, run, cfg, Phase.PROPOSING)
    assert alone.best is None and [n.name for n in alone.in_doubt] == ["mcts-1", "mcts-2"]
    assert best_text(alone).startswith(
        "No survivor has a tuned end-to-end speedup whose timing is not in doubt yet. Not ranked, timing in doubt: "
        "mcts-1 (operator 1, 2.50x: timing it alone failed (cancelled)); mcts-2"
    )


def test_the_original_and_the_verdicts_are_reported_apart_from_the_selection(tmp_path):
    summary = summary_of(tmp_path)
    assert original_text(summary) == (
        "The original network: 96.0% proxy (validation) accuracy; test accuracy over seeds 1, 2, 3: "
        "0.955 +- 0.007 (2 seeds)."
    )
    assert verdicts_text(summary) == (
        "Judged 1 candidate(s): 1 not shown worse on validation; 1 tested over 3 seeds: 1 within 1 point (the "
        "survivors), 0 worse, 0 undecided (the interval reaches across the margin: more seeds would tell)."
    )


def test_the_best_is_shown_beside_its_references_with_the_headline(tmp_path):
    said = report(summary_of(tmp_path))
    assert said.networks[0].startswith(
        "mcts-1 (survivor): test 0.948 +- 0.004, -0.2 points [-0.6, +0.2] (within after 3 seeds; stopped: the "
        "interval decided); 235.3 MFLOPs"
    )
    assert [line.split(" (")[0].split(":")[0] for line in said.networks[1:]] == [
        "the original",
        "resnet18 narrowed",
        "depthwise_separable",
    ]
    assert said.headline == (
        "No speedup at equal accuracy: resnet18 narrowed (x0.438 trained, x0.453 timed) is as accurate and 1.10x "
        "faster."
    )
    assert said.lines()[3] == "Beside its references:"


def test_a_stopped_run_says_one_time_and_no_training_in_progress(tmp_path):
    """After Stop the page says how long the run took, once, and never that the original is being trained."""
    stopped = summary_of(tmp_path, phase=Phase.STOPPED)
    assert time_text(stopped) == "Took 53 s" and ended_text(stopped).startswith("Stopped after 53 s: 1 proposed")
    untrained = replace(stopped, baseline_accuracy=None)
    assert "being trained" not in original_text(untrained)
    assert "being trained" in original_text(replace(untrained, phase=Phase.ORIGINAL))
    assert "the time limit starts once its figures are known" in time_text(replace(untrained, phase=Phase.ORIGINAL))
