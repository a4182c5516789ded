"""The discovery loop, as the papers run it: each candidate passes cheap stages before
expensive ones, every stage a job in the queue (so local workers or a Ray cluster run several
candidates at once) and every outcome kept in the store.

  1. Fisher Potential at initialisation against the original network's (NAS-PTE: a candidate
     below `fisher_threshold` x the original's is screened out), for every strategy.
  2. Proxy training, early-stopped by Canvas's rule against the best accuracy curve stored so
     far for this dataset, backbone and epoch budget (so it carries across candidates and runs),
     and stopped as "too slow" when an epoch would take SLOW times the original network's.
  3. Syno's margin: only a candidate within `margin` of the original network's validation
     accuracy (trained once per run, the template standing in for every convolution) goes on.
  4. Its reported accuracy, apart from everything that selected it: trained again with
     `test_seeds` seeds (those after the run's seed, core.train.seeds) and tested on the test
     split, paired seed by seed with the original's (tested once per run), its 95% interval
     judged against the margin (core.train.paired). It is reported, never used to select: early
     stop, the margin and the ranking read validation accuracy only.
  5. Tuned end-to-end latency of the network with the candidate against the tuned original
     (core.networks.end_to_end).
  6. Its references (core.search.references): the original narrowed to its FLOPs and
     depthwise-separable, tested over the same seeds as it is trained, and tuned on the same
     budget, once each.
  7. Its figure timed alone: a survivor is tuned while other candidates train (the schedules
     it finds are what matters then). Once the run has nothing else in flight (its time or
     candidates spent), every survivor is timed again, one at a time, from the schedules in the
     tuning database (no new trials), and every reference is tuned and timed, one at a time: the
     loop's figures are taken with no job of the run sharing the machine, and say so
     (timed_alone). The references are tuned alone too, which can only favour them.
The strategy is told a reward for every candidate as soon as its outcome is known (Syno's
reward, the FLOPs cap being the strategy's own hard limit; core.search.reward.outcome_reward):
its proxy accuracy (at the stop for one stopped early) normalised against the original's, a
small hint from the Fisher Potential for one screened out or too slow, 0 for one that diverged
or failed, each times the optional FLOPs penalty, so MCTS learns from every stage. An accuracy
known before the original's is told once the original's is.

Asking and telling are asynchronous: up to `in_flight` candidates are between stages at any
time, and results arrive in any order. A run is kept in the store under the key of its
settings (core.store.searches); running the same search again resumes it: candidates already
there are neither proposed nor evaluated again, and those left between stages carry on."""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

from ..ir.serialize import graph_from_document
from ..jobs.contract import Payload
from ..jobs.queue import CANCELLED, DONE, FAILED, JobQueue
from ..jobs.registry import job_result
from ..networks.settings import DeploySettings
from ..store import InvalidResult, Store
from ..store.searches import (
    FINAL,
    LIVE_JOB,
    SearchRun,
    candidates,
    open_run,
    references,
    row_of,
    set_baseline,
    set_baseline_test,
    set_stage,
    stage_counts,
)
from ..train.early_stop import best_curve
from ..train.paired import MARGIN, SEEDS, report_seeds
from ..train.payloads import E2EPayload, FisherPayload, HeldOutPayload, TrainPayload
from ..train.results import E2EResult, FisherResult, HeldOutResult, NetworkFlops, TrainResult
from ..train.settings import FISHER_THRESHOLD, EvalSettings, TrainConfig, proxy_task
from . import references as refs
from .base import SearchError
from .driver import SearchConfig, make_strategy
from .reward import TRAINED, outcome_reward
from .strategies import STRATEGIES

#: a candidate whose epoch would take this many times the original network's is stopped as
#: "too slow" (its module materialises a product the original never makes): on the default
#: task the original's epoch is about 4 s, and the slowest candidates' took minutes
SLOW = 10
#: a strategy's ask returns nothing when its tries (MCTS: 400 rollouts) find nothing new; the run
#: stops proposing only after this many such asks in a row, as later asks draw afresh (a
#: 60-minute run that stopped at its first empty ask, after 119 operators, replayed: the fourth
#: ask after it found new ones)
EMPTY_ASKS = 5
_STAGE_AGAIN = {
    "fisher": "screening",
    "train": "training",
    "test": "testing",
    "e2e": "tuning",
}  # where a stopped job's candidate resumes
WAITING = "waiting for the baseline"  # trained before the original's validation accuracy was known
WAITING_FOR_TEST = "waiting for the original's test"  # within the margin before the original was tested
WAITING_ALONE = "to be tuned and timed alone, when the run has nothing else in flight"  # a reference, tested


@dataclass
class DiscoveryConfig:
    """What one discovery run searches and how it judges. `evaluation`: the proxy task
    (EvalSettings' fields: dataset, backbone, width, resolution, ...) and training
    (TrainConfig's: epochs, theta, ...); `deploy`: where and how survivors are timed
    (core.networks.settings.DeploySettings' fields)."""

    template: dict
    strategy: str = "mcts"
    budget_flops: float | None = 1.0
    budget_params: float | None = None
    max_primitives: int = 8
    seed: int = 0
    minutes: float | None = 60.0
    samples: int | None = None
    in_flight: int = 2
    fisher: bool = True
    fisher_threshold: float = FISHER_THRESHOLD
    margin: float = MARGIN
    test_seeds: int = SEEDS  # a survivor's reported accuracy: seeds it and the original are trained with (0: none)
    references: bool = True  # hold every survivor against the narrowed original and depthwise-separable
    tune: bool = True
    flops_penalty: float = 0.0  # the reward's latency term (core.search.reward): 0 leaves it out
    evaluation: dict = field(default_factory=dict)
    deploy: dict = field(default_factory=dict)
    tuning_root: str | None = None
    name: str = ""

    @classmethod
    def from_dict(cls, values: dict) -> DiscoveryConfig:
        unknown = sorted(set(values) - set(cls.__dataclass_fields__))
        if unknown:
            raise SearchError(f"unknown discovery setting(s): {', '.join(unknown)}")
        cfg = cls(**values)
        cfg.check()
        return cfg

    def check(self) -> None:
        if self.strategy not in STRATEGIES:
            raise SearchError(f"strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")
        if self.samples is None and self.minutes is None:
            raise SearchError("give a number of candidates or a time limit in minutes")
        for name, low in (("in_flight", 1), ("samples", 1), ("test_seeds", 0)):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise SearchError(f"{name} must be a whole number >= {low}, got {value!r}")
        for name in ("fisher_threshold", "margin", "minutes", "flops_penalty"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise SearchError(f"{name} must be a number >= 0, got {value!r}")
        proxy_task(self.evaluation)  # EvaluationError names a bad setting
        if self.tune:
            DeploySettings.from_payload(self.deploy)  # DeployError names a bad setting

    @property
    def key(self) -> str:
        """What identifies the run: everything but how long it runs and how wide, and the
        references, which select nothing (and the report's seeds and the FLOPs penalty when the
        defaults, so that runs from before them keep their key)."""
        unkeyed = ("minutes", "samples", "in_flight", "name", "references")
        settings = {k: v for k, v in asdict(self).items() if k not in unkeyed}
        if self.test_seeds == SEEDS:
            del settings["test_seeds"]
        if not self.flops_penalty:
            del settings["flops_penalty"]
        return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def settings(self) -> EvalSettings:
        return proxy_task(self.evaluation)[0]

    @property
    def training(self) -> TrainConfig:
        return proxy_task(self.evaluation)[1]

    @property
    def epochs(self) -> int:
        return int(self.evaluation.get("epochs", TrainConfig.epochs))

    @property
    def report_seeds(self) -> tuple[int, ...]:
        return report_seeds(self.seed, self.test_seeds)


def discovery_config(template: dict, backbone: str, seed: int, proxy: dict, deploy: dict, **run) -> dict:
    """A run's settings (DiscoveryConfig's fields, checked) from the template, the proxy task
    (`proxy`: the other EvalSettings and TrainConfig fields, such as dataset, width, epochs,
    limit; None leaves one out), the deployment (`deploy`: DeploySettings' fields but the
    backbone and seed, which both sides share) and the rest (`run`: strategy, budget_flops,
    minutes, ...). The command line and the window build their runs here, so the same settings
    make the same run (and resume it) from either."""
    evaluation = {"backbone": backbone, "seed": seed, **{k: v for k, v in proxy.items() if v is not None}}
    config = {
        "template": template,
        "seed": seed,
        "evaluation": evaluation,
        "deploy": DeploySettings(backbone=backbone, seed=seed, **deploy).to_payload(),
        **run,
    }
    DiscoveryConfig.from_dict(config)
    return config


Progress = Callable[[float, str], None]


def run_discovery(
    config: dict,
    store_path: str,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    tick: Callable[[], None] = lambda: None,
    poll_s: float = 0.5,
    report: Callable[[dict], None] | None = None,
) -> dict:
    """Run (or resume) the loop until the time or candidate budget is spent, the strategy runs
    out, or the caller cancels; jobs are run by whatever workers serve the store (`tick` is
    called each round, e.g. to poll a Supervisor; `report` with the summary so far, e.g. to
    show the stage counts). Returns the summary: the stage counts, the baseline's accuracy and
    the best candidate (the highest tuned end-to-end speedup within the margin)."""
    cfg = DiscoveryConfig.from_dict(config)
    progress = progress or (lambda fraction, message: None)
    cancelled = cancelled or (lambda: False)
    strategy = make_strategy(
        SearchConfig(
            template=cfg.template,
            strategy=cfg.strategy,
            budget_flops=cfg.budget_flops,
            budget_params=cfg.budget_params,
            max_primitives=cfg.max_primitives,
            seed=cfg.seed,
        ),
        (cfg.settings.spec, *([DeploySettings.from_payload(cfg.deploy).spec] if cfg.tune else [])),
    )
    start = time.monotonic()
    with Store(store_path) as store:
        loop = _Loop(store, cfg, strategy, open_run(store, cfg.key, cfg.name or _name(cfg), asdict(cfg)))
        while not cancelled():
            tick()
            loop.advance()
            elapsed = time.monotonic() - start
            out_of_time = cfg.minutes is not None and elapsed >= cfg.minutes * 60
            if not out_of_time:
                loop.refill(cfg.samples)
            summary = loop.summary(elapsed)
            counts = summary["counts"]
            alone = f"; timing {summary['to_time_alone']} alone" if loop.settling else ""
            progress(_fraction(cfg, counts, elapsed), _describe(counts) + alone)
            if report is not None:
                report(summary)
            finished = out_of_time or loop.exhausted or loop.full(cfg.samples)
            if finished and not loop.busy() and not loop.time_alone():
                break
            time.sleep(poll_s)
        else:
            loop.cancel()
        return loop.summary(time.monotonic() - start)


class _Loop:
    """The run's candidates between stages: their jobs, the baseline's, the strategy."""

    def __init__(self, store: Store, cfg: DiscoveryConfig, strategy, run: SearchRun):
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
        self.untold: list[tuple[int, str, str, float]] = []  # ended with an accuracy before the original's was known
        self.chance: float | None = None  # 1 / the dataset's classes
        if run.baseline_accuracy is None and run.baseline_job_id is None:
            self.run = set_baseline(store, run, job_id=self._baseline())
        if cfg.test_seeds and self.run.baseline_test is None and self.run.baseline_test_job_id is None:
            self.run = set_baseline_test(store, self.run, job_id=self._baseline_test())
        found = [(row, row["operator_hash"]) for row in candidates(store, run)]
        for row, _ in found:
            strategy.seen.add(graph_from_document(store.operator(row["operator_id"])["document"]))
        for row, key in [*found, *((row, None) for row in references(store, run))]:  # resuming: nothing twice
            operator_id = row["operator_id"]
            if row["stage"] == "tuned" and row["job_state"] in LIVE_JOB:  # its timing alone went on
                self.jobs[row["job_id"]] = (operator_id, key)
                self.alone.add(row["job_id"])
            elif row["stage"] in FINAL or row["detail"] in (WAITING, WAITING_FOR_TEST, WAITING_ALONE):
                continue
            elif row["job_id"] is not None:  # its job went on while the loop was away
                self.jobs[row["job_id"]] = (operator_id, key)
            elif row["stage"] == "screening":  # its job was stopped with the run: again
                document = store.operator(operator_id)["document"]
                self._submit(operator_id, key, "screening", FisherPayload(document, self.settings))
            elif row["stage"] == "training":
                self._train(operator_id, row["operator_hash"], store.operator(operator_id)["document"])
            elif row["stage"] == "testing":
                self._test(operator_id, key)
            else:
                self._tune(operator_id, key)

    # -- proposing ------------------------------------------------------------------------
    def busy(self) -> bool:
        untested = self.cfg.test_seeds and self.run.baseline_test is None
        return bool(self.jobs) or self.run.baseline_accuracy is None or bool(untested)

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
                self._submit(operator_id, c.key, "screening", FisherPayload(c.document, self.settings))
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
                set_stage(self.store, self.run, operator_id, "tuned", detail=note)
            elif result is None:
                reward = 0.0 if key is None else self._reward(key, "failed")  # a reference earns nothing
                self._final(operator_id, key, "failed", reward, detail=f"{job.kind}: {why}")
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
            if row["stage"] == "training" and row["detail"] == WAITING:
                self._margin(row["operator_id"], row["operator_hash"], row["accuracy"])
            elif row["stage"] == "testing" and row["detail"] == WAITING_FOR_TEST and self.run.baseline_test:
                self._test(row["operator_id"], row["operator_hash"])

    def _screened(self, operator_id: int, key: str, r: FisherResult) -> None:
        ratio = r.fisher_ratio
        if ratio < self.cfg.fisher_threshold:
            self._final(
                operator_id,
                key,
                "screened out",
                self._reward(key, "screened out", fisher_ratio=ratio),
                fisher_ratio=ratio,
                detail=f"Fisher Potential {ratio:.3g}x the original's (below {self.cfg.fisher_threshold:g}x)",
            )
            return
        set_stage(self.store, self.run, operator_id, "training", fisher_ratio=ratio)
        self._train(operator_id, key, self.store.operator(operator_id)["document"])

    def _trained(self, operator_id: int, key: str, r: TrainResult) -> None:
        if r.outcome in ("diverged", "too slow"):  # no accuracy to speak of: at most a hint from the screen
            reward = self._reward(key, r.outcome, fisher_ratio=r.fisher_ratio)
            self._final(operator_id, key, r.outcome, reward, detail=r.reason)
            return
        accuracy = r.accuracy_per_epoch[-1]  # the last epoch's, also at an early stop
        if r.outcome in ("stopped early", "did not learn"):
            reward = self._reward(key, r.outcome, accuracy=accuracy)
            self._final(operator_id, key, r.outcome, reward, accuracy=accuracy, detail=r.reason)
            return
        self._margin(operator_id, key, accuracy)

    def _margin(self, operator_id: int, key: str, accuracy: float) -> None:
        base = self.run.baseline_accuracy
        if base is None:
            set_stage(self.store, self.run, operator_id, "training", accuracy=accuracy, detail=WAITING)
            return
        reward = self._reward(key, "trained", accuracy=accuracy)
        if accuracy < base - self.cfg.margin:
            detail = f"accuracy {accuracy:.3f} vs the original's {base:.3f}: more than {self.cfg.margin:g} below"
            set_stage(
                self.store, self.run, operator_id, "outside margin", accuracy=accuracy, reward=reward, detail=detail
            )
            return
        selected = {"accuracy": accuracy, "reward": reward, "selected_from": len(candidates(self.store, self.run))}
        if self.cfg.test_seeds:
            self._test(operator_id, key, **selected)
        else:
            self._tune(operator_id, key, **selected)

    def _test(self, operator_id: int, key: str | None, **fields) -> None:
        """Train it again over the report seeds and test it, paired with the original's test
        accuracies (it waits until they are known)."""
        if self.run.baseline_test is None:
            set_stage(self.store, self.run, operator_id, "testing", detail=WAITING_FOR_TEST, **fields)
            return
        document, settings, _ = self._network(operator_id)
        payload = HeldOutPayload(
            document,
            settings,
            self.cfg.training,
            self.cfg.report_seeds,
            original=self.run.baseline_test,
            margin=self.cfg.margin,
        )
        self._submit(operator_id, key, "testing", payload, **fields)

    def _tested(self, operator_id: int, key: str | None, r: HeldOutResult) -> None:
        s = r.score
        self._tune(
            operator_id,
            key,
            test_accuracy=s.test_accuracy,
            test_accuracy_std=s.test_accuracy_std,
            test_difference=s.test_difference,
            test_difference_low=s.test_difference_low,
            test_difference_high=s.test_difference_high,
            test_flops=_flops(r.flops),
        )

    def _tune(self, operator_id: int, key: str | None, **fields) -> None:
        if not self.cfg.tune:
            if key is None:
                set_stage(self.store, self.run, operator_id, "tested", detail="end-to-end timing is off", **fields)
                return
            detail = "within the margin; end-to-end timing is off"
            set_stage(self.store, self.run, operator_id, "within margin", detail=detail, **fields)
            self._survived(operator_id)
        elif key is None:
            set_stage(self.store, self.run, operator_id, "tuning", detail=WAITING_ALONE, **fields)
        else:
            self._submit(operator_id, key, "tuning", self._timing(operator_id), **fields)

    def _timing(self, operator_id: int) -> E2EPayload:
        document, settings, deploy = self._network(operator_id)
        return E2EPayload(document, deploy, settings, self.cfg.tuning_root)

    def _timed(self, operator_id: int, key: str | None, r: E2EResult, alone: bool) -> None:
        speedup = r.score.e2e_speedup if r.score.e2e_tuned else None
        notes = (r.timing_note, None if speedup is not None else "not every kernel got a schedule")
        set_stage(
            self.store,
            self.run,
            operator_id,
            "tuned",
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
        deploy = DeploySettings.from_payload(self.cfg.deploy)
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
                set_stage(self.store, self.run, reference, "testing", **fields)
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
            if row["stage"] == "tuned" and not row["timed_alone"] and operator_id not in self.tried_alone:
                self.tried_alone.add(operator_id)
                payload = self._timing(operator_id)
                job_id = self.queue.submit(payload.kind, payload.to_dict(), operator_id=operator_id)
                self.jobs[job_id] = (operator_id, row["operator_hash"])
                self.alone.add(job_id)
                set_stage(self.store, self.run, operator_id, "tuned", job_id=job_id)
                return True
        for row in references(self.store, self.run):
            if row["stage"] == "tuning" and row["detail"] == WAITING_ALONE:
                self._submit(row["operator_id"], None, "tuning", self._timing(row["operator_id"]))
                return True
        self.settling = False
        return False

    def _train(self, operator_id: int, key: str, document: dict) -> None:
        s = self.settings
        best = best_curve(self.store, s.dataset_label, s.spec.label, self.cfg.epochs)
        self._submit(operator_id, key, "training", self._training(document, best))

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

    def _final(self, operator_id: int, key: str | None, stage: str, reward: float | None, **fields) -> None:
        """Record a candidate's last stage with its reward (None: an accuracy to reward once the
        original's is known, _tell_untold); a reference (key None) earns nothing."""
        if reward is None and key is not None:
            self.untold.append((operator_id, key, stage, fields["accuracy"]))
        set_stage(self.store, self.run, operator_id, stage, reward=reward, **fields)

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
            set_stage(self.store, self.run, operator_id, stage, reward=self._reward(key, stage, accuracy=accuracy))
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
    def _submit(self, operator_id: int, key: str | None, stage: str, payload: Payload, **fields) -> None:
        job_id = self.queue.submit(payload.kind, payload.to_dict(), operator_id=operator_id)
        self.jobs[job_id] = (operator_id, key)
        set_stage(self.store, self.run, operator_id, stage, job_id=job_id, **{"detail": "", **fields})

    def _baseline(self) -> int:
        """The original network's proxy accuracy: the template in every convolution, trained once."""
        payload = self._training(self.cfg.template, None)
        return self.queue.submit(payload.kind, payload.to_dict(), operator_id=self._template_id())

    def _baseline_test(self) -> int:
        """The original network's test accuracy over the report seeds, once per run."""
        payload = HeldOutPayload(self.cfg.template, self.settings, self.cfg.training, self.cfg.report_seeds, pair=False)
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
            again = "tuned" if job_id in self.alone else _STAGE_AGAIN[self.queue.get(job_id).kind]
            set_stage(self.store, self.run, operator_id, again, job_id=None)
        if self.run.baseline_accuracy is None and self.run.baseline_job_id is not None:
            self.queue.cancel(self.run.baseline_job_id, "the discovery run was stopped")
            self.run = set_baseline(self.store, self.run)
        if self.run.baseline_test is None and self.run.baseline_test_job_id is not None:
            self.queue.cancel(self.run.baseline_test_job_id, "the discovery run was stopped")
            self.run = set_baseline_test(self.store, self.run)

    # -- the report -----------------------------------------------------------------------------
    def summary(self, seconds: float) -> dict:
        return {**summarize(self.store, self.run, self.cfg, seconds, self.strategy.stats), "exhausted": self.exhausted}


def summarize(store: Store, run: SearchRun, cfg: DiscoveryConfig, seconds: float, stats: dict) -> dict:
    """A run's report: the stage counts, the original's validation accuracy and test accuracies,
    how many survivors and references are still to be timed alone, and the best candidate:
    ranked by its tuned end-to-end speedup among those within the margin of the validation
    accuracy (selection never reads the test split), with its test report, FLOPs and latency,
    its references (core.search.references) and the headline they give."""
    rows = candidates(store, run)
    found = references(store, run)
    tuned = [r for r in rows if r["stage"] == "tuned" and r["e2e_speedup"]]
    best = max(tuned, key=lambda r: r["e2e_speedup"], default=None)
    counts = stage_counts(store, run)
    return {
        "run": run.id,
        "name": run.name,
        "baseline_accuracy": run.baseline_accuracy,
        "baseline_test": run.baseline_test,
        "test_seeds": cfg.report_seeds,
        "counts": counts,
        "to_time_alone": sum(r["stage"] == "tuned" and not r["timed_alone"] for r in rows)
        + sum(r["stage"] == "tuning" for r in found),
        "best": None if best is None else _best(best, found, run, cfg, counts),
        "seconds": round(seconds, 1),
        "stats": stats,
    }


def _best(row: dict, found: list[dict], run: SearchRun, cfg: DiscoveryConfig, counts: dict) -> dict:
    figures = refs.figures(row, cfg.margin)
    beside = refs.beside(row, found, run.baseline_test, cfg.margin)
    return {
        **figures,
        "accuracy": row["accuracy"],
        # ranked first of the candidates the run has judged
        "selected_from": counts["proposed"] - counts["in flight"],
        "references": beside,
        "headline": refs.headline(figures, beside, cfg.margin),
    }


def _flops(flops: NetworkFlops | None) -> str | None:
    """A row's FLOPs as the store keeps them (JSON)."""
    return None if flops is None else json.dumps(asdict(flops))


def _name(cfg: DiscoveryConfig) -> str:
    template = cfg.template.get("name") or "template"
    return f"{cfg.strategy} on {template} ({cfg.settings.spec.label}, {cfg.settings.dataset_label})"


def _fraction(cfg: DiscoveryConfig, counts: dict[str, int], elapsed: float) -> float:
    if cfg.minutes is not None:  # 0 minutes: a resumed run finishes what it has, proposing nothing
        return min(elapsed / (cfg.minutes * 60), 1.0) if cfg.minutes else 1.0
    done = counts["proposed"] - counts["in flight"] - counts["waiting"]
    return min(done / cfg.samples, 1.0) if cfg.samples else 0.0


def _describe(counts: dict[str, int]) -> str:
    parts = ("proposed", "screened out", "trained", "stopped early", "within margin", "tuned", "in flight")
    return ", ".join(f"{counts[p]} {p}" for p in parts)
