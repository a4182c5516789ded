"""The loop's verdicts (core.search.loop), driven through a real store and job queue, each job
finished as a worker would with the result its kind returns: on validation, the seed rule with
the spread of the original's validation accuracy over the report seeds sends a candidate shown
worse out of the margin and lets one it cannot tell apart go on to the test; on the test split,
a survivor is one whose verdict says within (it alone is tuned), and one shown worse or
undecided ends there, counted apart in the report."""

from __future__ import annotations

from core.data.conv_fit import Replacement
from core.ir.serialize import load_operator, read_document
from core.jobs.queue import JobQueue
from core.search.base import Candidate
from core.search.driver import make_strategy
from core.search.loop import Loop
from core.search.report import verdicts_text
from core.search.settings import DiscoveryConfig
from core.search.stages import Phase, Stage
from core.search.summary import summarize
from core.store import Store
from core.store.score import Score
from core.store.searches import candidates, open_run
from core.train.results import HeldOutResult, SeedRun, TrainResult
from tests.support import EXAMPLES

ORIGINAL_TEST = (0.90, 0.90, 0.90)
#: the candidates' keys (named canvas-<key>) -> (operator, validation accuracy, test accuracy per seed)
PLANTED = {
    "within": ("grouped_conv", 0.895, (0.900, 0.901, 0.899)),  # within on both
    "unsure": ("depthwise_separable", 0.875, (0.880, 0.895, 0.870)),  # undecided on validation and on test
    "worse": ("shift_conv", 0.880, (0.850, 0.852, 0.848)),  # undecided on validation; worse on test
    "far": ("involution", 0.800, ()),  # 10 points below: worse on validation, never tested
}


def train_result(accuracy: float) -> dict:
    return TrainResult(
        score=Score("digits@8px", "vgg/w4"),
        fisher_potential=1.0,
        fisher_original=1.0,
        fisher_passes=True,
        fisher_layers={},
        fisher_layers_original={},
        replacement=Replacement("x", 0, ()),
        accuracy_per_epoch=(accuracy,),
        seconds_per_epoch=(1.0,),
        reason="",
        outcome="trained",
        epochs_planned=1,
        classes=10,
    ).to_dict()


def held_out_result(accuracies: tuple[float, ...], original: tuple[float, ...] | None) -> dict:
    runs = [SeedRun(seed, a, v, "trained", 1.0) for seed, a, v in zip((1, 2, 3), accuracies, (0.89, 0.90, 0.91))]
    return HeldOutResult.of(
        runs, None if original is None else list(original), 0.01, 1, "digits@8px", "vgg/w4"
    ).to_dict()


def finish(queue: JobQueue, kind: str, result) -> None:
    """Finish the oldest queued job of `kind` as a worker would, `result` made from its payload."""
    job = queue.claim([kind])
    assert job is not None, f"no {kind} job queued"
    assert queue.complete(job, result(job))


def planted_loop(store: Store, operators: dict[str, str], **settings) -> Loop:
    """A loop on vgg (width 4, 8 px) with no screen and no references, its strategy proposing
    `operators` (candidate key -> bundled example) in order, one each; `settings` change the rest."""
    cfg = DiscoveryConfig.from_dict(
        {
            "template": read_document(EXAMPLES / "conv2d.json"),
            "strategy": "canvas",
            "samples": len(operators),
            "in_flight": len(operators),
            "fisher": False,
            "references": False,
            "evaluation": {"backbone": "vgg", "width": 4, "resolution": 8},
            **settings,
        }
    )
    strategy = make_strategy(cfg)
    planted = [Candidate(load_operator(EXAMPLES / f"{op}.json"), "planted", key, 0, 0) for key, op in operators.items()]
    strategy.ask = lambda n=1: [planted.pop(0)] if planted else []
    return Loop(store, cfg, strategy, open_run(store, cfg.key, "run", cfg.to_dict()))


def test_the_seed_rule_decides_on_validation_and_on_the_test_split(tmp_path):
    with Store(tmp_path / "d.db") as store:
        queue = JobQueue(store)
        operators = {key: op for key, (op, *_) in PLANTED.items()}
        # a fixed count of 3 seeds, one look (the rule's looks: test_discovery_sequential.py)
        loop = planted_loop(store, operators, seed_cap=0)
        cfg = loop.cfg
        finish(queue, "train", lambda job: train_result(0.90))  # the original, on validation
        finish(queue, "test", lambda job: held_out_result(ORIGINAL_TEST, None))  # and over the report seeds
        loop.advance()
        assert loop.original_known
        loop.refill(4)
        for _, accuracy, _ in PLANTED.values():
            finish(queue, "train", lambda job, a=accuracy: train_result(a))
        loop.advance()
        stages = {row["operator_name"].split("-")[-1]: row["stage"] for row in candidates(store, loop.run)}
        assert stages["far"] == Stage.OUTSIDE_MARGIN  # -10 points [-12.8, -7.2]: shown worse
        assert stages["unsure"] == stages["worse"] == Stage.TESTING  # undecided on validation: the test decides
        by_hash = {row["operator_hash"]: row["operator_name"].split("-")[-1] for row in candidates(store, loop.run)}
        for _ in range(3):
            job = queue.claim(["test"])
            assert job is not None
            name = by_hash[store.operator(job.operator_id)["hash"]]
            assert queue.complete(job, held_out_result(PLANTED[name][2], ORIGINAL_TEST))
        loop.advance()
        rows = {row["operator_name"].split("-")[-1]: row for row in candidates(store, loop.run)}
        assert rows["within"]["stage"] == Stage.TUNING  # within on the test split: a survivor, tuned
        assert rows["worse"]["stage"] == Stage.WORSE
        assert rows["unsure"]["stage"] == Stage.UNDECIDED
        assert rows["unsure"]["detail"].startswith("undecided at 1 point after 3 seeds")
        assert [job.operator_id for job in queue.jobs() if job.kind == "e2e"] == [rows["within"]["operator_id"]]
        summary = summarize(store, loop.run, cfg, Phase.PROPOSING)
    assert verdicts_text(summary) == (
        "Judged 3 candidate(s): 3 not shown worse on validation; 3 tested over 3 seeds: 1 within 1 point (the "
        "survivors), 1 worse, 1 undecided (the interval reaches across the margin: more seeds would tell)."
    )
