"""The discovery loop's state machine (core.search.discovery runs it): the run's candidates
between stages, each stage a job in the queue, and the strategy told a reward for every
outcome. Each candidate's stage is a Stage value kept in the store (core.store.searches), so a
stopped run resumes where it was; the jobs in flight and the strategy live here, in memory.

A candidate goes SCREENING (Fisher Potential) -> TRAINING (proxy, early-stopped) -> the margin
on validation (OUTSIDE_MARGIN when shown worse) -> TESTING over the report seeds, paired with
the original (seeds added until the run's seed rule decides) -> the test verdict (WORSE,
UNDECIDED, or within: a survivor) -> TUNING -> TUNED, with WAITING_FOR_ORIGINAL and
WAITING_FOR_TEST while the original's figures are not known. A survivor's references
(core.search.references) are tested and, once the run has nothing else in flight, tuned and
timed alone (WAITING_ALONE until then)."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, replace

from ..ir.serialize import graph_from_document
from ..jobs.contract import Payload
from ..jobs.queue import CANCELLED, DONE, FAILED, JobQueue
from ..jobs.registry import job_result
from ..networks.settings import DeploySettings
from ..store import InvalidResult, Store
from ..store.searches import SearchRun, candidates, references, row_of, set_baseline, set_baseline_test, set_stage
from ..train.early_stop import best_curve
from ..train.paired import points
from ..train.payloads import E2EPayload, FisherPayload, HeldOutPayload, TrainPayload
from ..train.results import E2EResult, FisherResult, HeldOutResult, NetworkFlops, TrainResult
from ..train.sequential import UNDECIDED, WITHIN, WORSE
from ..train.settings import EvalSettings
from . import references as refs
from .base import SearchError, Strategy
from .reward import TRAINED, outcome_reward
from .settings import DiscoveryConfig
from .stages import FINAL, LIVE_JOB, WAITING, Stage
from .summary import judged, test_decision

#: a candidate whose epoch would take this many times the original network's is stopped as
#: "too slow" (its module materialises a product the original never makes): on the default
#: task the original's epoch is about 4 s, and the slowest candidates' took minutes
SLOW = 10
#: a strategy's ask returns nothing when its tries (MCTS: 400 rollouts) find nothing new; the run
#: stops proposing only after this many such asks in a row, as later asks draw afresh (a
#: 60-minute run that stopped at its first empty ask, after 119 operators, replayed: the fourth
#: ask after it found new ones)
EMPTY_ASKS = 5
#: where a stopped job's candidate resumes, by the job's kind
AGAIN = {"fisher": Stage.SCREENING, "train": Stage.TRAINING, "test": Stage.TESTING, "e2e": Stage.TUNING}


class Loop:
    """The run's candidates between stages: their jobs, the baseline's, the strategy."""

    def __init__(self, store: Store, cfg: DiscoveryConfig, strategy: Strategy, run: SearchRun):
        self.store, self.cfg, self.strategy, self.run = store, cfg, strategy, run
        self.queue = JobQueue(store)
        self.settings = cfg.settings
        self.empty_asks = 0  # the strategy's empty asks in a row
        # job id -> (operator id, candidate key; None for a reference, which the strategy never hears of)
        self.jobs: dict[int, tuple[int, str | None]] = {}
        self.alone: set[int] = set()  # the jobs timing a survivor or reference again, alone
        self.settling = False  # timing them alone: the run has nothing else to do
        self.tried_alone: set[int] = set()  # operators timed alone (or tried) in this session
        self.flops_ratio: dict[str, float] = {}  # candidate key -> its FLOPs over the original's
        self.untold: list[tuple[int, str, Stage, float]] = []  # ended with an accuracy before the original's was known
        self.chance: float | None = None  # 1 / the dataset's classes
        self.val_spread: float | None = None  # _validation_spread's, once read (0.0: none to read)
        if run.baseline_accuracy is None and run.baseline_job_id is None:
            self.run = set_baseline(store, run, job_id=self._baseline())
        if cfg.test_seeds and self.run.baseline_test is None and self.run.baseline_test_job_id is None:
            self.run = set_baseline_test(store, self.run, job_id=self._baseline_test())
        found = [(row, row["operator_hash"]) for row in candidates(store, run)]
        for row, _ in found:
            strategy.seen.add(graph_from_document(store.operator(row["operator_id"])["document"]))
        for row, key in [*found, *((row, None) for row in references(store, run))]:  # resuming: nothing twice
            operator_id = row["operator_id"]
            if row["stage"] == Stage.TUNED and row["job_state"] in LIVE_JOB:  # its timing alone went on
                self.jobs[row["job_id"]] = (operator_id, key)
                self.alone.add(row["job_id"])
            elif row["stage"] in FINAL or row["stage"] in WAITING:
                continue
            elif row["job_id"] is not None:  # its job went on while the loop was away
                self.jobs[row["job_id"]] = (operator_id, key)
            elif row["stage"] == Stage.SCREENING:  # its job was stopped with the run: again
                document = store.operator(operator_id)["document"]
                self._submit(operator_id, key, Stage.SCREENING, FisherPayload(document, self.settings))
            elif row["stage"] == Stage.TRAINING:
                self._train(operator_id, row["operator_hash"], store.operator(operator_id)["document"])
            elif row["stage"] == Stage.TESTING:
                self._test(operator_id, key)
            else:
                self._tune(operator_id, key)

    # -- proposing ------------------------------------------------------------------------
    @property
    def original_known(self) -> bool:
        """Whether the original network's figures are in: its validation accuracy, and its test
        accuracies when the run reports any."""
        untested = self.cfg.test_seeds and self.run.baseline_test is None
        return self.run.baseline_accuracy is not None and not untested

    def busy(self) -> bool:
        return bool(self.jobs) or not self.original_known

    def full(self, samples: int | None) -> bool:
        return samples is not None and len(candidates(self.store, self.run)) >= samples

    @property
    def exhausted(self) -> bool:
        """Whether the strategy found nothing new in EMPTY_ASKS asks in a row."""
        return self.empty_asks >= EMPTY_ASKS

    def refill(self, samples: int | None) -> None:
        while len(self.jobs) < self.cfg.in_flight and not self.exhausted and not self.full(samples):
            batch = self.strategy.ask(1)
            if not batch:
                self.empty_asks += 1
                return
            self.empty_asks = 0
            c = batch[0]
            self.flops_ratio[c.key] = c.flops / self.strategy.limits.reference_flops
            operator_id = self.store.add_operator(
                c.graph, f"{self.strategy.name}-{c.key[:8]}", c.origin, c.info.get("sequence")
            )
            if self.cfg.fisher:
                self._submit(operator_id, c.key, Stage.SCREENING, FisherPayload(c.document, self.settings))
            else:
                self._train(operator_id, c.key, c.document)

    # -- moving candidates on ---------------------------------------------------------------
    def advance(self) -> None:
        if self.run.baseline_accuracy is None:
            self._baseline_done()
        if self.cfg.test_seeds and self.run.baseline_test is None:
            self._baseline_tested()
        for job_id, (operator_id, key) in list(self.jobs.items()):
            job = self.queue.get(job_id)
            if job.state not in (DONE, FAILED, CANCELLED):
                continue
            del self.jobs[job_id]
            try:
                result = job_result(job) if job.state == DONE else None
                why = job.error or job.state
            except InvalidResult as e:  # a result an older Tessera kept
                result, why = None, str(e)
            if result is None and job_id in self.alone:  # a survivor's first timing stands, and says so
                note = f"timing it alone failed ({why}): its figure is from a timing while other jobs ran"
                self._set(operator_id, Stage.TUNED, detail=note)
            elif result is None:
                reward = 0.0 if key is None else self._reward(key, "failed")  # a reference earns nothing
                self._final(operator_id, key, Stage.FAILED, reward, detail=f"{job.kind}: {why}")
            elif isinstance(result, FisherResult):  # a TrainResult too
                assert key is not None  # only candidates are screened and trained
                if isinstance(result, TrainResult):
                    self._trained(operator_id, key, result)
                else:
                    self._screened(operator_id, key, result)
            elif isinstance(result, HeldOutResult):
                self._tested(operator_id, key, result)
            elif isinstance(result, E2EResult):  # a reference is only ever timed alone
                self._timed(operator_id, key, result, alone=job_id in self.alone or key is None)
        if self.run.baseline_accuracy is not None:
            self._tell_untold()
        for row in candidates(self.store, self.run):  # trained (or passed the margin) before the original was
            if row["stage"] == Stage.WAITING_FOR_ORIGINAL and self.original_known:
                self._margin(row["operator_id"], row["operator_hash"], row["accuracy"])
            elif row["stage"] == Stage.WAITING_FOR_TEST and self.run.baseline_test:
                self._test(row["operator_id"], row["operator_hash"])

    def _screened(self, operator_id: int, key: str, r: FisherResult) -> None:
        ratio = r.fisher_ratio
        if ratio < self.cfg.fisher_threshold:
            self._final(
                operator_id,
                key,
                Stage.SCREENED_OUT,
                self._reward(key, Stage.SCREENED_OUT, fisher_ratio=ratio),
                fisher_ratio=ratio,
                detail=f"Fisher Potential {ratio:.3g}x the original's (below {self.cfg.fisher_threshold:g}x)",
            )
            return
        self._set(operator_id, Stage.TRAINING, fisher_ratio=ratio)
        self._train(operator_id, key, self.store.operator(operator_id)["document"])

    def _trained(self, operator_id: int, key: str, r: TrainResult) -> None:
        if r.outcome in ("diverged", "too slow"):  # no accuracy to speak of: at most a hint from the screen
            reward = self._reward(key, r.outcome, fisher_ratio=r.fisher_ratio)
            self._final(operator_id, key, Stage(r.outcome), reward, detail=r.reason)
            return
        accuracy = r.accuracy_per_epoch[-1]  # the last epoch's, also at an early stop
        if r.outcome in ("stopped early", "did not learn"):
            reward = self._reward(key, r.outcome, accuracy=accuracy)
            self._final(operator_id, key, Stage(r.outcome), reward, accuracy=accuracy, detail=r.reason)
            return
        self._margin(operator_id, key, accuracy)

    def _margin(self, operator_id: int, key: str, accuracy: float) -> None:
        """The seed rule on validation: the candidate's one seed against the original's, with an
        interval from the spread of the original's validation accuracy over the report seeds
        (sqrt(2) x its standard deviation, for the two sides' noise; no interval with fewer than
        2 of them, and the margin is then a hard line). One shown worse is outside the margin;
        within or undecided, it goes on to the test, which decides."""
        base = self.run.baseline_accuracy
        if base is None or not self.original_known:
            self._set(operator_id, Stage.WAITING_FOR_ORIGINAL, accuracy=accuracy)
            return
        reward = self._reward(key, "trained", accuracy=accuracy)
        difference, half = accuracy - base, self._validation_spread()
        interval = (difference, difference) if half is None else (difference - half, difference + half)
        outcome = judged(interval, self.cfg.margin)
        if half is None and outcome == UNDECIDED:  # exactly on the line: a hard line keeps it
            outcome = WITHIN
        words = f"validation {accuracy:.3f} vs the original's {base:.3f}: {100 * difference:+.1f} points" + (
            "" if half is None else f" [{100 * interval[0]:+.1f}, {100 * interval[1]:+.1f}]"
        )
        if outcome == WORSE:
            detail = f"{words}, below -{points(self.cfg.margin)}"
            self._set(operator_id, Stage.OUTSIDE_MARGIN, accuracy=accuracy, reward=reward, detail=detail)
            return
        selected = {"accuracy": accuracy, "reward": reward, "selected_from": len(candidates(self.store, self.run))}
        if self.cfg.test_seeds:
            self._test(operator_id, key, **selected)
        else:
            self._tune(operator_id, key, **selected)

    def _validation_spread(self) -> float | None:
        """Half the 95% interval of a one-seed validation difference: 1.96 x sqrt(2) x the standard
        deviation of the original's validation accuracy over the report seeds (None: under 2)."""
        if self.val_spread is None and self.run.baseline_test_job_id is not None:
            job = self.queue.get(self.run.baseline_test_job_id)
            found = [r.val_accuracy for r in job_result(job).runs if r.val_accuracy is not None]
            self.val_spread = 1.96 * math.sqrt(2) * statistics.stdev(found) if len(found) > 1 else 0.0
        return self.val_spread or None

    def _test(self, operator_id: int, key: str | None, **fields) -> None:
        """Train it again over the report seeds and test it, paired with the original's test
        accuracies (it waits until those of the first look are known): with the run's seed rule,
        the job adds seeds a few at a time until the verdict decides or the cap is reached, and
        trains the original (the template, at the run's settings: also for a narrowed reference)
        for the seeds past the first look that no earlier job of the store trained."""
        if self.run.baseline_test is None:
            self._set(operator_id, Stage.WAITING_FOR_TEST, **fields)
            return
        document, settings, _ = self._network(operator_id)
        payload = HeldOutPayload(
            document,
            settings,
            self.cfg.training,
            self.cfg.report_seeds,
            original=self.run.baseline_test,
            original_operator=self.cfg.template,
            original_settings=self.settings,
            margin=self.cfg.margin,
            rule=self.cfg.seed_rule,
        )
        self._submit(operator_id, key, Stage.TESTING, payload, **fields)

    def _tested(self, operator_id: int, key: str | None, r: HeldOutResult) -> None:
        """A candidate whose test verdict says within survives (it is tuned); one shown worse, or
        undecided, ends there, with the verdict in words. The verdict is the job's own: its seed
        rule's at its last look, or for a fixed count one look at 95%. A reference goes on
        whatever its verdict: it is what survivors are held against."""
        s = r.score
        fields = {
            "test_accuracy": s.test_accuracy,
            "test_accuracy_std": s.test_accuracy_std,
            "test_difference": s.test_difference,
            "test_difference_low": s.test_difference_low,
            "test_difference_high": s.test_difference_high,
            "test_flops": _flops(r.flops),
        }
        verdict = r.decision or test_decision(fields, self.cfg.margin, len(r.runs))
        if key is None or (verdict is not None and verdict.outcome == WITHIN):
            self._tune(operator_id, key, **fields)
            return
        stage = Stage.WORSE if verdict is not None and verdict.outcome == WORSE else Stage.UNDECIDED
        words = "no seed trained" if verdict is None else verdict.words()
        self._set(operator_id, stage, detail=words, **fields)

    def _tune(self, operator_id: int, key: str | None, **fields) -> None:
        if not self.cfg.tune:
            if key is None:
                self._set(operator_id, Stage.TESTED, detail="end-to-end timing is off", **fields)
                return
            detail = "within the margin; end-to-end timing is off"
            self._set(operator_id, Stage.WITHIN_MARGIN, detail=detail, **fields)
            self._survived(operator_id)
        elif key is None:
            self._set(operator_id, Stage.WAITING_ALONE, **fields)
        else:
            self._submit(operator_id, key, Stage.TUNING, self._timing(operator_id), **fields)

    def _timing(self, operator_id: int) -> E2EPayload:
        document, settings, deploy = self._network(operator_id)
        return E2EPayload(document, deploy, settings, self.cfg.tuning_root)

    def _timed(self, operator_id: int, key: str | None, r: E2EResult, alone: bool) -> None:
        speedup = r.score.e2e_speedup if r.score.e2e_tuned else None
        notes = (r.timing_note, None if speedup is not None else "not every kernel got a schedule")
        self._set(
            operator_id,
            Stage.TUNED,
            e2e_speedup=speedup,
            e2e_latency_ms=r.latency_ms,
            e2e_baseline_ms=r.baseline_latency_ms,
            e2e_flops=_flops(r.flops),
            timed_alone=int(alone),
            detail="; ".join(n for n in notes if n),
        )
        if key is not None and not alone:
            self._survived(operator_id)

    def _network(self, operator_id: int) -> tuple[dict | None, EvalSettings, DeploySettings]:
        """What a row's jobs train and time: its operator in the backbone, or for a narrowed
        reference, no operator and the backbone under its width multipliers."""
        deploy = self.cfg.deployment
        row = row_of(self.store, self.run, operator_id)
        if row is not None and row["reference"] == refs.NARROWED:
            trained, timed = row["scale"], row["deploy_scale"]
            return None, replace(self.settings, scale=trained or timed), replace(deploy, scale=timed or trained)
        return self.store.operator(operator_id)["document"], self.settings, deploy

    def _survived(self, operator_id: int) -> None:
        """A survivor has its figures: its references start, those the run has not already."""
        row = row_of(self.store, self.run, operator_id)
        if not self.cfg.references or not (self.cfg.test_seeds or self.cfg.tune) or row is None:
            return
        for reference, fields in refs.wanted(self.store, self.cfg.template, self.settings.backbone, row):
            if row_of(self.store, self.run, reference) is None:
                self._set(reference, Stage.TESTING, **fields)
                if self.cfg.test_seeds:
                    self._test(reference, None)
                else:
                    self._tune(reference, None)

    def time_alone(self) -> bool:
        """With nothing else of the run in flight, one at a time: time again the next survivor
        not yet timed alone (its schedules are in the tuning database), else tune and time the
        next reference waiting for it. False when none is left."""
        self.settling = True
        for row in candidates(self.store, self.run):
            operator_id = row["operator_id"]
            if row["stage"] == Stage.TUNED and not row["timed_alone"] and operator_id not in self.tried_alone:
                self.tried_alone.add(operator_id)
                payload = self._timing(operator_id)
                job_id = self.queue.submit(payload.kind, payload.to_dict(), operator_id=operator_id)
                self.jobs[job_id] = (operator_id, row["operator_hash"])
                self.alone.add(job_id)
                self._set(operator_id, Stage.TUNED, job_id=job_id)
                return True
        for row in references(self.store, self.run):
            if row["stage"] == Stage.WAITING_ALONE:
                self._submit(row["operator_id"], None, Stage.TUNING, self._timing(row["operator_id"]))
                return True
        self.settling = False
        return False

    def _train(self, operator_id: int, key: str, document: dict) -> None:
        s = self.settings
        best = best_curve(self.store, s.dataset_label, s.spec.label, self.cfg.training.epochs)
        self._submit(operator_id, key, Stage.TRAINING, self._training(document, best))

    def _training(self, document: dict, best: list[float] | None) -> TrainPayload:
        training = replace(self.cfg.training, max_epoch_seconds=self._epoch_limit())
        return TrainPayload(document, self.settings, training, tuple(best) if best else None)

    def _epoch_limit(self) -> float | None:
        """The run's own limit when its settings set one, else SLOW x the original network's
        median epoch in this run (None until the original has trained)."""
        if self.cfg.training.max_epoch_seconds is not None or self.run.baseline_job_id is None:
            return self.cfg.training.max_epoch_seconds
        job = self.queue.get(self.run.baseline_job_id)
        if job.state != DONE:
            return None
        seconds = job_result(job).seconds_per_epoch
        return SLOW * statistics.median(seconds) if seconds else None

    def _final(self, operator_id: int, key: str | None, stage: Stage, reward: float | None, **fields) -> None:
        """Record a candidate's last stage with its reward (None: an accuracy to reward once the
        original's is known, _tell_untold); a reference (key None) earns nothing."""
        if reward is None and key is not None:
            self.untold.append((operator_id, key, stage, fields["accuracy"]))
        self._set(operator_id, stage, reward=reward, **fields)

    # -- rewards ------------------------------------------------------------------------------
    def _reward(self, key: str, outcome: str, **facts) -> float | None:
        """The candidate's reward for how it ended (core.search.reward.outcome_reward), told to the
        strategy; None for an accuracy while the original's is not known yet."""
        if outcome in TRAINED:
            if self.run.baseline_accuracy is None:
                return None
            facts.update(original=self.run.baseline_accuracy, chance=self._chance())
        reward = outcome_reward(
            outcome,
            threshold=self.cfg.fisher_threshold,
            flops_ratio=self.flops_ratio.get(key),
            flops_penalty=self.cfg.flops_penalty,
            **facts,
        )
        self.strategy.tell(key, reward)
        return reward

    def _tell_untold(self) -> None:
        """Reward the candidates that ended with an accuracy before the original's was known."""
        for operator_id, key, stage, accuracy in self.untold:
            self._set(operator_id, stage, reward=self._reward(key, stage, accuracy=accuracy))
        self.untold = []

    def _chance(self) -> float:
        """1 / the dataset's classes, read from the original network's training (0 when the run
        has no such job to read: the reward then normalises by the original's accuracy alone)."""
        if self.chance is None:
            job_id = self.run.baseline_job_id
            job = None if job_id is None else self.queue.get(job_id)
            self.chance = 1 / job_result(job).classes if job is not None and job.state == DONE else 0.0
        return self.chance

    # -- jobs -------------------------------------------------------------------------------------
    def _submit(self, operator_id: int, key: str | None, stage: Stage, payload: Payload, **fields) -> None:
        job_id = self.queue.submit(payload.kind, payload.to_dict(), operator_id=operator_id)
        self.jobs[job_id] = (operator_id, key)
        self._set(operator_id, stage, job_id=job_id, **{"detail": "", **fields})

    def _set(self, operator_id: int, stage: Stage, **fields) -> None:
        """Where a candidate (or reference) stands now, kept in the store."""
        set_stage(self.store, self.run, operator_id, stage.value, **fields)

    def _baseline(self) -> int:
        """The original network's proxy accuracy: the template in every convolution, trained once."""
        payload = self._training(self.cfg.template, None)
        return self.queue.submit(payload.kind, payload.to_dict(), operator_id=self._template_id())

    def _baseline_test(self) -> int:
        """The original network's test accuracy over the report seeds, once per run: with a seed
        rule, over its first look's only (the candidates' jobs train it for later seeds when one
        needs them, each seed once: core.train.seeds.originals_known)."""
        rule, seeds = self.cfg.seed_rule, self.cfg.report_seeds
        first = seeds[: rule.first] if rule else seeds
        payload = HeldOutPayload(self.cfg.template, self.settings, self.cfg.training, first, pair=False)
        return self.queue.submit(payload.kind, payload.to_dict(), operator_id=self._template_id())

    def _template_id(self) -> int:
        return self.store.add_operator(self.cfg.template, self.cfg.template.get("name") or "template", "baseline")

    def _baseline_done(self) -> None:
        assert self.run.baseline_job_id is not None  # __init__ queued it
        job = self.queue.get(self.run.baseline_job_id)
        if job.state == DONE:
            accuracy = job_result(job).accuracy_per_epoch[-1]
            self.run = set_baseline(self.store, self.run, accuracy, job.id)
        elif job.state in (FAILED, CANCELLED):
            raise SearchError(f"the original network could not be trained ({job.error or job.state})")

    def _baseline_tested(self) -> None:
        assert self.run.baseline_test_job_id is not None  # __init__ queued it
        job = self.queue.get(self.run.baseline_test_job_id)
        if job.state == DONE:
            runs = job_result(job).runs
            self.run = set_baseline_test(self.store, self.run, [r.accuracy for r in runs], job.id)
        elif job.state in (FAILED, CANCELLED):
            raise SearchError(f"the original network could not be tested ({job.error or job.state})")

    def cancel(self) -> None:
        """Stop the run's jobs; the next run of the same search submits them again."""
        for job_id, (operator_id, _) in self.jobs.items():
            self.queue.cancel(job_id, "the discovery run was stopped")
            again = Stage.TUNED if job_id in self.alone else AGAIN[self.queue.get(job_id).kind]
            self._set(operator_id, again, job_id=None)
        if self.run.baseline_accuracy is None and self.run.baseline_job_id is not None:
            self.queue.cancel(self.run.baseline_job_id, "the discovery run was stopped")
            self.run = set_baseline(self.store, self.run)
        if self.run.baseline_test is None and self.run.baseline_test_job_id is not None:
            self.queue.cancel(self.run.baseline_test_job_id, "the discovery run was stopped")
            self.run = set_baseline_test(self.store, self.run)


def _flops(flops: NetworkFlops | None) -> str | None:
    """A row's FLOPs as the store keeps them (JSON)."""
    return None if flops is None else json.dumps(asdict(flops))
