"""A discovery run's summary as typed records, read from the store: the stage counts, the
original network's accuracies, how the test verdicts fell (judged, within, worse,
undecided), and the best survivor with its references (core.search.references). The loop
reports one each round, and core.search.report renders it for the command line and the window
alike. Selection never reads the test split: the best is the survivor with the highest tuned
end-to-end speedup, and a survivor is a candidate whose test verdict says within (or, in a run
with no test seeds, one within the margin on validation). A speedup whose timing is in doubt
(its row's note says why) is never ranked: those survivors are listed apart, to be timed again."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..jobs.errors import PayloadError
from ..jobs.queue import DONE, JobQueue
from ..jobs.registry import job_result
from ..store import InvalidResult, Store
from ..store.searches import SearchRun, candidates, references
from ..train.payloads import HeldOutPayload
from ..train.results import E2EResult, HeldOutResult
from ..train.sequential import UNDECIDED, WITHIN, WORSE, Decision, SeedRule
from . import references as refs
from .settings import DiscoveryConfig
from .stages import Phase, Stage, stage_counts

SURVIVOR, ORIGINAL = "survivor", "original"  # Network.kind, beside references.NARROWED and SEPARABLE


@dataclass(frozen=True)
class TestReport:
    """A network's test accuracy over the run's seeds, paired seed by seed with the original's,
    and the verdict of the seed rule (core.train.sequential) on the paired differences: how many
    seeds it took and why it stopped."""

    accuracy: float
    std: float | None
    difference: float
    decision: Decision

    @property
    def within(self) -> bool:
        return self.decision.outcome == WITHIN


@dataclass(frozen=True)
class Network:
    """What the report shows of a survivor, a reference or the original: its test report (for
    the original, its accuracies per seed), FLOPs where it was timed (else where it was tested),
    tuned latency and speedup over the original, and PyTorch's eager latency beside them."""

    kind: str  # SURVIVOR, ORIGINAL, references.NARROWED or references.SEPARABLE
    name: str
    stage: str
    test: TestReport | None = None
    accuracies: tuple[float, ...] = ()  # the original's test accuracy per seed
    flops: int | None = None
    original_flops: int | None = None
    latency_ms: float | None = None  # TVM, tuned
    speedup: float | None = None  # over the tuned original
    torch_ms: float | None = None  # PyTorch eager, the same network
    timed_alone: bool = False
    note: str = ""  # why its timing is in doubt
    operator_id: int | None = None


@dataclass(frozen=True)
class Best:
    """The best survivor so far: selected at `accuracy` (validation) among `selected_from`
    candidates judged, with the networks it is held against."""

    survivor: Network
    accuracy: float
    selected_from: int
    references: tuple[Network, ...]

    def reference(self, kind: str) -> Network | None:
        return next((r for r in self.references if r.kind == kind), None)


@dataclass(frozen=True)
class RunSummary:
    run: int
    name: str
    phase: Phase
    counts: dict[str, int]
    baseline_accuracy: float | None  # the original's, on validation
    baseline_test: tuple[float, ...]  # the original's test accuracy per seed (those trained)
    test_seeds: tuple[int, ...]  # those the test stage may train with (up to the seed rule's cap)
    seed_rule: SeedRule | None  # how the test stage adds seeds (None: all of test_seeds)
    margin: float
    tune: bool
    to_time_alone: int  # survivors and references still to be timed alone
    best: Best | None
    seconds: float  # this sitting's, the original's training included
    budget_seconds: float | None  # the time limit, counted from when the original's figures are known
    spent_seconds: float  # of it
    exhausted: bool  # the strategy found nothing new several asks in a row
    stats: dict[str, Any]
    in_doubt: tuple[Network, ...] = ()  # tuned survivors left out of the ranking: their timing is in doubt

    @property
    def judged(self) -> int:
        """Candidates the run has decided on (proposed and no longer in flight or waiting)."""
        c = self.counts
        return c["proposed"] - c["in flight"] - c["waiting"]


def test_decision(row: dict, margin: float, seeds: int) -> Decision | None:
    """The seed rule's verdict on a row's stored test figures, a single look at all its seeds
    (None: not tested, or no interval)."""
    low, high = row["test_difference_low"], row["test_difference_high"]
    if row["test_accuracy"] is None:
        return None
    interval = None if low is None else (low, high)
    return Decision(judged(interval, margin), True, seeds, interval, seeds, margin, 0.95, seeds)


def judged(interval: tuple[float, float] | None, margin: float) -> str:
    """The seed rule's outcome for an interval of the difference from the original: WITHIN when
    it lies entirely above -margin, WORSE entirely below, else (or with none) UNDECIDED."""
    if interval is None:
        return UNDECIDED
    return WITHIN if interval[0] > -margin else WORSE if interval[1] < -margin else UNDECIDED


def summarize(
    store: Store,
    run: SearchRun,
    cfg: DiscoveryConfig,
    phase: Phase,
    seconds: float = 0.0,
    spent: float = 0.0,
    exhausted: bool = False,
    stats: dict | None = None,
) -> RunSummary:
    rows = candidates(store, run)
    found = references(store, run)
    counts = stage_counts(rows)
    tuned = [r for r in rows if r["stage"] == Stage.TUNED and r["e2e_speedup"]]
    best = max((r for r in tuned if not r["detail"]), key=lambda r: r["e2e_speedup"], default=None)
    queue = JobQueue(store)
    summary = RunSummary(
        run=run.id,
        name=run.name,
        phase=phase,
        counts=counts,
        baseline_accuracy=run.baseline_accuracy,
        baseline_test=tuple(a for a in run.baseline_test or () if a is not None),
        test_seeds=cfg.report_seeds,
        seed_rule=cfg.seed_rule,
        margin=cfg.margin,
        tune=cfg.tune,
        to_time_alone=sum(r["stage"] == Stage.TUNED and not r["timed_alone"] for r in rows)
        + sum(r["stage"] == Stage.WAITING_ALONE for r in found),
        best=None,
        seconds=round(seconds, 1),
        budget_seconds=None if cfg.minutes is None else 60 * cfg.minutes,
        spent_seconds=round(spent, 1),
        exhausted=exhausted,
        stats=stats or {},
        in_doubt=tuple(network(queue, r, SURVIVOR, cfg) for r in tuned if r["detail"]),
    )
    if best is None:
        return summary
    survivor = network(queue, best, SURVIVOR, cfg)
    original = Network(
        ORIGINAL,
        "the original",
        Stage.TUNED if best["e2e_baseline_ms"] else Stage.TESTED,
        accuracies=summary.baseline_test,
        flops=survivor.original_flops,
        latency_ms=best["e2e_baseline_ms"],
        speedup=1.0 if best["e2e_baseline_ms"] else None,
        torch_ms=_torch(queue, best, "torch_baseline_ms"),
        timed_alone=bool(best["timed_alone"]),
    )
    trained, timed = refs.scales(best)
    beside = [
        network(queue, row, row["reference"], cfg)
        for row in found
        if row["reference"] == refs.SEPARABLE
        or (row["reference"] == refs.NARROWED and (row["scale"], row["deploy_scale"]) == (trained, timed))
    ]
    # ranked first of the candidates the run has judged
    chosen = Best(survivor, best["accuracy"], summary.judged, (original, *beside))
    return replace(summary, best=chosen)


def network(queue: JobQueue, row: dict, kind: str, cfg: DiscoveryConfig) -> Network:
    """A survivor's or reference's figures from its row; its verdict from its last test job
    (the seed rule's, with how many seeds it took), else one look at the row's figures."""
    flops = refs.flops(row, "e2e_flops") or refs.flops(row, "test_flops")
    tested = None if row["test_accuracy"] is None else last_test(queue, row["operator_id"], cfg)
    verdict = (tested.decision if tested else None) or test_decision(row, cfg.margin, len(cfg.report_seeds))
    return Network(
        kind,
        row["operator_name"],
        row["stage"],
        test=None
        if verdict is None
        else TestReport(row["test_accuracy"], row["test_accuracy_std"], row["test_difference"], verdict),
        flops=None if flops is None else flops["flops"],
        original_flops=None if flops is None else flops["original"],
        latency_ms=row["e2e_latency_ms"],
        speedup=row["e2e_speedup"],
        torch_ms=_torch(queue, row, "torch_latency_ms"),
        timed_alone=bool(row["timed_alone"]),
        note=row["detail"] or "",
        operator_id=row["operator_id"],
    )


def last_test(queue: JobQueue, operator_id: int, cfg: DiscoveryConfig) -> HeldOutResult | None:
    """The operator's last finished test job on the run's task (its training, seeds, margin and
    seed rule; a narrowed reference's width aside), None when there is none to read."""
    found = queue.db.query(
        "SELECT id FROM jobs WHERE operator_id = ? AND kind = 'test' AND state = ? ORDER BY id DESC",
        [operator_id, DONE],
    )
    task = (cfg.report_seeds, cfg.margin, cfg.seed_rule, cfg.training)
    for job in [queue.get(row["id"]) for row in found]:
        try:
            p, result = HeldOutPayload.from_dict(job.payload), job_result(job)
        except (PayloadError, InvalidResult):  # one an older Tessera kept
            continue
        settings = replace(p.settings, scale=cfg.settings.scale)
        if (
            (p.seeds, p.margin, p.rule, p.training) == task
            and settings == cfg.settings
            and isinstance(result, HeldOutResult)
        ):
            return result
    return None


def _torch(queue: JobQueue, row: dict, field: str) -> float | None:
    """PyTorch's eager latency from the row's end-to-end timing job (None: not timed yet)."""
    if row["job_id"] is None or not row["e2e_latency_ms"]:
        return None
    job = queue.get(row["job_id"])
    if job.kind != "e2e" or job.state != DONE:
        return None
    try:
        result = job_result(job)
    except InvalidResult:  # a result an older Tessera kept
        return None
    return getattr(result, field, None) if isinstance(result, E2EResult) else None
