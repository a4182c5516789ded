"""bench_discovery's `fisher` section: does the Fisher Potential screen predict trained accuracy
here, and which threshold should the loop use? NAS-PTE rejects a candidate scoring below the
original network's (about 90% of random configurations); nobody had measured whether the score
ranks candidates on this task.

Candidates are drawn by a strategy in Syno's space (random sampling by default: the space the
loop searches, without MCTS's preferences), network-wide like the loop's, and each is trained
in full on the proxy task (no early stop: its final validation accuracy, whatever its first
epochs; stopped as too slow at the loop's limit, SLOW x the original's epoch). Each training job
also scores the candidate's Fisher Potential at initialisation against the original's over the
same layers (the ratio the loop's screen reads). Every job is kept in the store, so a second
run with the same settings and a larger count trains only the new candidates (the strategy's
seed gives the same stream again).

Printed: Spearman's rank correlation (scipy) between the ratio and the trained accuracy with
its p-value and a 95% bootstrap interval (scipy.stats.bootstrap, paired resamples), then for
each threshold the share of scored candidates it would screen out and how many of the best
trained candidates (the ten most accurate, and those within 1 point of the original) it would
lose, and the largest threshold that loses none of them."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import stats

from core.ir.serialize import read_document
from core.jobs.queue import DONE, FAILED, JobQueue
from core.jobs.registry import job_result
from core.jobs.supervisor import Supervisor
from core.search.driver import make_strategy
from core.search.loop import SLOW
from core.search.settings import SearchConfig
from core.store import Store
from core.train.payloads import TrainPayload
from core.train.results import TrainResult
from core.train.settings import FISHER_THRESHOLD, EvalSettings, TrainConfig
from tests.support import EXAMPLES

THRESHOLDS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
TOP = 10
MARGIN = 0.01


def fisher_prediction(
    settings: EvalSettings,
    count: int,
    path: Path,
    epochs: int,
    strategy: str = "random",
    seed: int = 0,
    workers: int = 2,
) -> None:
    """Train `count` candidates (those already in the store at `path` count) and print the figures."""
    training = TrainConfig(epochs=epochs)
    template = read_document(EXAMPLES / "conv2d.json")
    print(
        f"Fisher Potential against trained accuracy: {count} candidates drawn by {strategy} (seed {seed}) on "
        f"conv2d, {settings.spec.label} on {settings.dataset_label}, {epochs} epochs in full, {workers} workers "
        f"of 1 thread; store {path}"
    )
    start = time.monotonic()
    with Store(path) as store:
        queue = JobQueue(store)
        original_id = store.add_operator(template, "conv2d", "baseline")
        original = _job(queue, original_id, settings, epochs) or queue.submit(
            "train", TrainPayload(template, settings, training).to_dict(), operator_id=original_id
        )
    _work(path, workers, "the original")
    with Store(path) as store:
        queue = JobQueue(store)
        base = job_result(queue.get(original))
        limit = SLOW * statistics.median(base.seconds_per_epoch)
        jobs = _candidates(store, queue, count, settings, replace(training, max_epoch_seconds=limit), strategy, seed)
    _work(path, workers, f"{count} candidates")
    with Store(path) as store:
        queue = JobQueue(store)
        results = [queue.get(job_id) for job_id in jobs]
    print(
        f"  the original: accuracy {base.accuracy_per_epoch[-1]:.3f}, {statistics.median(base.seconds_per_epoch):.1f} s "
        f"per epoch (too slow above {limit:.0f} s); this session {time.monotonic() - start:.0f} s"
    )
    report([job_result(j) if j.state == DONE else j.error or j.state for j in results], base.accuracy_per_epoch[-1])


def _job(queue: JobQueue, operator_id: int, settings: EvalSettings, epochs: int) -> int | None:
    """This operator's training job under these settings, if the store has one that did not fail."""
    for job in queue.jobs():
        if job.kind == "train" and job.operator_id == operator_id and job.state != FAILED:
            payload = TrainPayload.from_dict(job.payload)
            if payload.settings == settings and payload.training.epochs == epochs:
                return job.id
    return None


def _candidates(store, queue, count, settings, training, strategy, seed) -> list[int]:
    """The training jobs of the strategy's first `count` candidates, queued where missing."""
    config = SearchConfig(template=read_document(EXAMPLES / "conv2d.json"), strategy=strategy, seed=seed)
    proposer = make_strategy(config, (settings.spec,))
    jobs: list[int] = []
    while len(jobs) < count:
        batch = proposer.ask(1)
        if not batch:
            print(f"  the strategy ran out after {len(jobs)} candidates")
            break
        c = batch[0]
        operator_id = store.add_operator(c.graph, f"{strategy}-{c.key[:8]}", c.origin)
        job = _job(queue, operator_id, settings, training.epochs)
        if job is None:
            job = queue.submit("train", TrainPayload(c.document, settings, training).to_dict(), operator_id=operator_id)
        jobs.append(job)
    return jobs


def _work(path: Path, workers: int, what: str) -> None:
    """Run the store's queued jobs to the end, a line every 5 minutes."""
    supervisor = Supervisor(path, workers=workers)
    supervisor.start()
    shown = start = time.monotonic()
    try:
        while supervisor.busy():
            supervisor.poll()
            if time.monotonic() - shown >= 300:
                shown = time.monotonic()
                left = len(supervisor.queue.jobs(("queued", "running")))
                print(f"    training {what}: {left} jobs left after {shown - start:.0f} s", flush=True)
            time.sleep(1.0)
    finally:
        supervisor.stop()


def report(results: list[TrainResult | str], original: float) -> None:
    """The correlation and the thresholds' effects, from the candidates' training results (a
    string for a job that failed, e.g. no meaningful Fisher Potential)."""
    done = [r for r in results if isinstance(r, TrainResult)]
    scored = [r for r in done if math.isfinite(r.fisher_ratio)]
    trained = [(r.fisher_ratio, a) for r in scored if (a := _accuracy(r)) is not None]
    outcomes: dict[str, int] = {}
    for r in results:
        key = r.outcome if isinstance(r, TrainResult) else "failed (" + r.split(":")[0][:60] + ")"
        outcomes[key] = outcomes.get(key, 0) + 1
    print(f"  {len(results)} candidates: " + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())))
    if len(trained) < 3:
        print("  too few trained candidates for a correlation")
        return
    ratios, accuracies = np.array([t[0] for t in trained]), np.array([t[1] for t in trained])
    rho = stats.spearmanr(ratios, accuracies)
    interval = stats.bootstrap(
        (ratios, accuracies),
        lambda x, y: stats.spearmanr(x, y).statistic,
        paired=True,
        vectorized=False,
        n_resamples=2000,
        method="percentile",
        rng=np.random.default_rng(0),
    ).confidence_interval
    print(
        f"  Spearman's rho between Fisher Potential (x the original's) and trained accuracy over the {len(trained)} "
        f"trained: {rho.statistic:.3f} (p = {rho.pvalue:.2g}; 95% bootstrap interval {interval.low:.3f} to "
        f"{interval.high:.3f})"
    )
    low, median, high = np.quantile(ratios, (0.25, 0.5, 0.75))
    print(f"  ratios of the trained: quartiles {low:.3g}, {median:.3g}, {high:.3g}; original's accuracy {original:.3f}")
    top = sorted(trained, key=lambda t: -t[1])[:TOP]
    within = [t for t in trained if t[1] >= original - MARGIN]
    all_ratios = [r.fisher_ratio for r in scored]
    print(
        f"  | threshold (x the original's) | screened out (of {len(all_ratios)} scored) | of the top {len(top)} lost | "
        f"of the {len(within)} within {MARGIN:g} lost |"
    )
    print("  |---|---|---|---|")
    keeps = []
    for threshold in THRESHOLDS:
        out = sum(r < threshold for r in all_ratios)
        lost_top = sum(t[0] < threshold for t in top)
        lost_within = sum(t[0] < threshold for t in within)
        keeps.append((threshold, lost_within if within else lost_top))
        print(
            f"  | {threshold:g}{' (now)' if threshold == FISHER_THRESHOLD else ''} | {out} ({out / len(all_ratios):.0%}) | "
            f"{lost_top} | {lost_within} |"
        )
    safe = [t for t, lost in keeps if lost == 0]
    what = f"the {len(within)} within {MARGIN:g}" if within else f"the top {len(top)}"
    print(
        f"  largest threshold that loses none of {what}: {max(safe):g}" if safe else f"  every threshold loses {what}"
    )


def _accuracy(r: TrainResult) -> float | None:
    """The final validation accuracy; None when training diverged or was stopped as too slow."""
    if r.outcome in ("diverged", "too slow") or not r.accuracy_per_epoch:
        return None
    return r.accuracy_per_epoch[-1]
