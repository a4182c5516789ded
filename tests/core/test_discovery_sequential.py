"""The loop's test stage with the seed rule (core.train.sequential), driven through a real store
and job queue: each test job is run by its own handler (core.train.handlers.held_out_job), only
the trainings planted (each seed's accuracy chosen), and finished with the result it returns.
A candidate undecided at the first look gets more seeds, one decided there stops, one undecided
at the cap ends undecided; the loop takes each job's own verdict, and the report says how many
seeds each took and why it stopped. A run with the cap at 0 keeps the key it had before."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.jobs.queue import JobQueue
from core.search.base import SearchError
from core.search.report import network_line, verdicts_text
from core.search.settings import DiscoveryConfig
from core.search.stages import Phase, Stage
from core.search.summary import SURVIVOR, Best, network, summarize
from core.store import Store
from core.store.searches import candidates
from core.train import handlers
from core.train.payloads import HeldOutPayload
from core.train.results import HeldOutResult, SeedRun
from core.train.sequential import DEFAULT_RULE, SeedRule
from tests.core.test_discovery_verdicts import finish, planted_loop, train_result

ORIGINAL = (0.90, 0.91, 0.89, 0.90, 0.92, 0.88, 0.90)  # the original's test accuracy, seeds 1 to 7
#: the candidates' keys -> (operator, their paired differences from the original, seed by seed)
PLANTED = {
    "close": ("grouped_conv", (0.0, 0.004, -0.004, 0.002, -0.002, 0.0, 0.0)),  # undecided at 3, within at 5
    "worse": ("shift_conv", (-0.05, -0.052, -0.048, -0.05, -0.05, -0.05, -0.05)),  # worse at 3
    "unsure": ("depthwise_separable", (0.02, -0.04, 0.01, -0.03, 0.0, -0.02, 0.01)),  # undecided at the cap
}


def test_the_test_stage_adds_seeds_until_the_verdict_decides_and_the_report_says_how_many(tmp_path, monkeypatch):
    trained: dict[str, list[int]] = {key: [] for key in [*PLANTED, "original"]}
    testing = [""]  # the key of the candidate whose test job runs

    def planted_training(stand_in, settings, config, seeds, progress=None, data=None):
        """Each seed's test accuracy as planted: the original's (the template, conv2d), or the
        original's plus the candidate's difference."""
        key = "original" if stand_in.name == "conv2d" else testing[0]
        trained[key] += seeds
        difference = PLANTED[key][1] if key in PLANTED else (0.0,) * 7
        return [SeedRun(s, ORIGINAL[s - 1] + difference[s - 1], 0.9, "trained", 1.0) for s in seeds]

    monkeypatch.setattr(handlers, "train_over_seeds", planted_training)
    with Store(tmp_path / "d.db") as store:
        queue = JobQueue(store)
        worker = type("Context", (), {"progress": lambda self, fraction, message: None, "store": store})()
        task = {"dataset": "digits", "backbone": "vgg", "width": 4, "resolution": 8}
        operators = {key: op for key, (op, _) in PLANTED.items()}
        loop = planted_loop(store, operators, tune=False, seed_cap=7, evaluation=task)  # looks at 3, 5 and 7 seeds
        cfg = loop.cfg
        assert cfg.seed_rule == SeedRule(cfg.margin, 3, DEFAULT_RULE.step, 7, DEFAULT_RULE.alpha)
        finish(queue, "train", lambda job: train_result(0.90))  # the original, on validation
        original = [SeedRun(s, a, v, "trained", 1.0) for s, a, v in zip(range(1, 4), ORIGINAL, (0.89, 0.91, 0.89))]
        finish(queue, "test", lambda job: HeldOutResult.of(original, None, 0.01, 1, "digits@8px", "vgg/w4").to_dict())
        loop.advance()
        assert loop.run.baseline_test == ORIGINAL[:3]  # tested up front over the rule's first look only
        loop.refill(3)
        for _ in PLANTED:
            finish(queue, "train", lambda job: train_result(0.90))
        loop.advance()
        for _ in PLANTED:
            job = queue.claim(["test"])
            assert job is not None
            payload = HeldOutPayload.from_dict(job.payload)
            assert payload.seeds == tuple(range(1, 8)) and payload.original == ORIGINAL[:3]
            assert payload.rule == cfg.seed_rule
            testing[0] = store.operator(job.operator_id)["name"].split("-")[-1]
            assert queue.complete(job, handlers.held_out_job(job.payload, worker).to_dict())
        loop.advance()
        rows = {row["operator_name"].split("-")[-1]: row for row in candidates(store, loop.run)}
        summary = summarize(store, loop.run, cfg, Phase.PROPOSING)
        close = network(queue, rows["close"], SURVIVOR, cfg)
    # the original's later seeds trained on demand, each once: "close" (tested first) needed 4-5
    assert trained == {
        "close": [1, 2, 3, 4, 5],
        "worse": [1, 2, 3],
        "unsure": list(range(1, 8)),
        "original": [4, 5, 6, 7],
    }
    assert rows["close"]["stage"] == Stage.WITHIN_MARGIN  # within at the second look: a survivor
    assert rows["worse"]["stage"] == Stage.WORSE
    assert rows["worse"]["detail"].startswith("more than 1 point worse after 3 seeds: the 98.6% interval")
    assert rows["worse"]["detail"].endswith("stopped: the interval decided")
    assert rows["unsure"]["stage"] == Stage.UNDECIDED
    assert rows["unsure"]["detail"].endswith("stopped: the cap of 7 seeds, undecided")
    assert verdicts_text(summary) == (
        "Judged 3 candidate(s): 3 not shown worse on validation; 3 tested over 3 to 7 seeds (2 more at a time "
        "until the verdict decides): 1 within 1 point (the survivors), 1 worse, 1 undecided (the interval reaches "
        "across the margin: still so at the cap of 7 seeds)."
    )
    assert close.test is not None and close.test.decision.seeds == 5
    assert "-0.6, +0.6] (within after 5 seeds; stopped: the interval decided)" in network_line(
        close, Best(close, 0.9, 3, ())
    )


#: the key of these settings before the seed cap existed (the cap left out when 0)
SETTINGS = {"template": {"name": "t"}, "evaluation": {"backbone": "vgg"}, "tune": False}
KEY_BEFORE = "ac16bfac24efeff4"


def test_a_run_with_the_seed_cap_at_0_keeps_its_key_and_the_default_is_the_sequential_rule():
    fixed = DiscoveryConfig.from_dict({**SETTINGS, "seed_cap": 0})
    assert fixed.key == KEY_BEFORE and fixed.seed_rule is None and fixed.report_seeds == (1, 2, 3)
    assert DiscoveryConfig.stored(SETTINGS) == fixed  # a run kept before the cap reads back as it ran
    sequential = DiscoveryConfig.from_dict(SETTINGS)
    assert sequential.key != KEY_BEFORE  # another run: its verdicts are the rule's
    assert sequential.seed_rule == replace(DEFAULT_RULE, margin=sequential.margin)
    assert sequential.report_seeds == tuple(range(1, DEFAULT_RULE.cap + 1))
    with pytest.raises(SearchError, match=r"test_seeds are the seed rule's first look: between 2 and seed_cap \(15\)"):
        DiscoveryConfig.from_dict({**SETTINGS, "test_seeds": 1})


def test_the_original_is_tested_up_front_over_the_first_look_and_its_later_seeds_once_on_demand(tmp_path, monkeypatch):
    """The up-front test of the original covers the rule's first look only; a candidate that
    needs seeds 4-5 has its job train the original for them, a second candidate's job reuses
    them from the store, and a narrowed reference pairs with the full-width original, never
    with itself."""
    trained: list[tuple[str, float, tuple[int, ...]]] = []  # (what, width multiplier, seeds)
    close = PLANTED["close"][1]  # undecided at 3 seeds, within at 5

    def planted_training(stand_in, settings, config, seeds, progress=None, data=None):
        what = "narrowed" if stand_in is None else "original" if stand_in.name == "conv2d" else "candidate"
        trained.append((what, settings.scale, tuple(seeds)))
        difference = (0.0,) * 7 if what == "original" else close
        return [SeedRun(s, ORIGINAL[s - 1] + difference[s - 1], 0.9, "trained", 1.0) for s in seeds]

    monkeypatch.setattr(handlers, "train_over_seeds", planted_training)
    with Store(tmp_path / "d.db") as store:
        queue = JobQueue(store)
        worker = type("Context", (), {"progress": lambda self, fraction, message: None, "store": store})()

        def run_test() -> HeldOutResult:
            job = queue.claim(["test"])
            assert job is not None
            result = handlers.held_out_job(job.payload, worker)
            assert queue.complete(job, result.to_dict())
            return result

        task = {"dataset": "digits", "backbone": "vgg", "width": 4, "resolution": 8}
        loop = planted_loop(
            store, {"first": "grouped_conv", "second": "grouped_conv"}, tune=False, seed_cap=7, evaluation=task
        )
        finish(queue, "train", lambda job: train_result(0.90))  # the original, on validation
        up_front = run_test()
        assert [r.seed for r in up_front.runs] == [1, 2, 3] and trained == [
            ("original", 1.0, (1,)),
            ("original", 1.0, (2,)),
            ("original", 1.0, (3,)),
        ]
        loop.advance()
        assert loop.run.baseline_test == ORIGINAL[:3] and loop.original_known
        loop.refill(2)
        finish(queue, "train", lambda job: train_result(0.90))
        finish(queue, "train", lambda job: train_result(0.90))
        loop.advance()
        trained.clear()
        first, second = run_test(), run_test()
        assert first.original == second.original == ORIGINAL[:5]  # both paired over 5 seeds
        originals = [seeds for what, _, seeds in trained if what == "original"]
        assert originals == [(4,), (5,)]  # trained once, by the first candidate's job
        # a narrowed reference: the narrowed network is the candidate, the full-width template the original
        reference = store.add_operator(loop.cfg.template, "vgg narrowed", "reference")
        loop._set(reference, Stage.TESTING, reference="narrowed", scale=0.5, deploy_scale=0.5)
        loop._test(reference, None)
        trained.clear()
        narrowed = run_test()
    assert narrowed.original == ORIGINAL[:5] and [r.seed for r in narrowed.runs] == [1, 2, 3, 4, 5]
    assert trained == [("narrowed", 0.5, (s,)) for s in range(1, 6)]  # the original's seeds all reused
