"""A survivor's references in the store and in its report (core.search.references): rows of their
own that the candidates' counts leave out, one narrowed original per pair of width multipliers,
and the headline: the speedup over the FLOPs-matched original at equal accuracy, or plainly none
(core.search.report)."""

from __future__ import annotations

from core.search import references
from core.search.report import headline, network_line
from core.search.stages import Phase, stage_counts
from core.search.summary import Best, summarize
from core.store import Store
from core.store.searches import candidates
from core.store.searches import references as reference_rows
from tests.views.discovery_data import TEMPLATE, held_out, run_with_references


def best_of(store, cfg, run) -> Best:
    best = summarize(store, run, cfg, Phase.FINISHED).best
    assert best is not None
    return best


def test_references_have_rows_and_operators_of_their_own_and_one_per_pair_of_multipliers(tmp_path):
    with Store(tmp_path / "s.db") as store:
        _cfg, run, survivor = run_with_references(store, held_out(-0.003, -0.008, 0.002), 2.0)
        assert len(candidates(store, run)) == 1 and stage_counts(candidates(store, run))["proposed"] == 1
        found = reference_rows(store, run)
        assert [r["reference"] for r in found] == ["narrowed", "depthwise-separable"]
        assert [r["operator_name"] for r in found] == [
            "resnet18 narrowed (x0.438 trained, x0.453 timed)",
            "depthwise_separable (reference)",
        ]
        assert (found[0]["scale"], found[0]["deploy_scale"]) == (0.4375, 0.453125)
        template = store.add_operator(TEMPLATE)
        assert all(store.operator(r["operator_id"])["origin"] == "reference" for r in found)
        assert template not in {r["operator_id"] for r in found}  # the template's own row stays the original's
        again = references.wanted(store, TEMPLATE, "resnet18", survivor)  # a survivor of equal FLOPs: the same
        assert [operator for operator, _ in again] == [r["operator_id"] for r in found]
        shown = {r["operator_id"]: r["origin"] for r in store.results()}
        assert all(shown[r["operator_id"]] == "reference" for r in found)  # rows the Explorer lists


def test_the_headline_is_the_speedup_over_the_flops_matched_original_at_equal_accuracy(tmp_path):
    with Store(tmp_path / "s.db") as store:
        cfg, run, _ = run_with_references(store, held_out(-0.003, -0.008, 0.002), 2.0)
        best = best_of(store, cfg, run)
    assert [r.kind for r in best.references] == ["original", "narrowed", "depthwise-separable"]
    assert headline(best, cfg.margin) == (
        "1.25x faster than resnet18 narrowed (x0.438 trained, x0.453 timed) at equal accuracy (both within 1 point "
        "of the original by the test verdict; 2.50x faster than the original)"
    )
    lines = [network_line(n, best) for n in (best.survivor, *best.references)]
    assert lines[0] == (
        "mcts-1 (survivor): test 0.948 +- 0.004, -0.2 points [-0.6, +0.2] (within after 3 seeds; stopped: the "
        "interval decided); 235.3 MFLOPs; 4.00 ms tuned, "
        "2.50x the original, 1.25x the narrowed"
    )
    assert lines[2].startswith("resnet18 narrowed (x0.438 trained, x0.453 timed): test 0.947")
    assert lines[2].endswith("5.00 ms tuned, 2.00x the original")


def test_no_speedup_at_equal_accuracy_is_said_plainly(tmp_path):
    with Store(tmp_path / "s.db") as store:
        cfg, run, _ = run_with_references(store, held_out(-0.003, -0.008, 0.002), 2.75)  # as accurate, and faster
        assert headline(best_of(store, cfg, run), cfg.margin) == (
            "no speedup at equal accuracy: resnet18 narrowed (x0.438 trained, x0.453 timed) is as accurate and "
            "1.10x faster"
        )
    with Store(tmp_path / "t.db") as store:
        cfg, run, _ = run_with_references(store, held_out(-0.02, -0.03, -0.01), 2.0)  # the narrowed one loses accuracy
        assert headline(best_of(store, cfg, run), cfg.margin) == (
            "mcts-1 keeps the original's accuracy where resnet18 narrowed (x0.438 trained, x0.453 timed), of equal "
            "FLOPs, is not shown to (within 1 point); it is 1.25x faster than it and 2.50x faster than the original"
        )
