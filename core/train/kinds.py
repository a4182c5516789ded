"""The accuracy side's job kinds. Their results (core.train.results) carry the store's score
of the operator under "score", which is recorded; everything else stays on the job row.
Fisher Potential, training and testing over seeds may run on a cluster (training uses a GPU
where the cluster gives one: core.train.device); "e2e" times kernels on this machine, so it
stays in local workers."""

from __future__ import annotations

from ..data.assignment import is_assignment
from ..jobs.registry import JobKind, TaskResources
from ..store import InvalidResult
from .paired import mean_std
from .payloads import E2EPayload, FisherPayload, HeldOutPayload, TrainPayload
from .results import E2EResult, FisherResult, HeldOutResult, TrainResult


def record_score(store, job, result: FisherResult | HeldOutResult | E2EResult) -> None:
    """The score of the job's operator; an assignment's (several operators) or the plain
    backbone's stays on its job."""
    operator = job.payload.get("operator")
    if job.operator_id is not None:
        store.add_score(job.operator_id, result.score, job_id=job.id)
    elif operator is not None and not is_assignment(operator):  # None: the backbone as it is
        raise InvalidResult("the job names no operator to attach a score to")


def screened(r: FisherResult) -> str:
    """'Fisher Potential 1.32x the original network's'."""
    return f"Fisher Potential {r.fisher_ratio:.2f}x the original network's"


def trained(r: TrainResult) -> str:
    """'93.1%', or with how it ended when not in full: '41.0%, stopped early: ...'."""
    at = f"{r.accuracy_per_epoch[-1]:.1%}" if r.accuracy_per_epoch else "no accuracy"
    return at if r.outcome == "trained" else f"{at}, {r.outcome}: {r.reason}"


def tested(r: HeldOutResult) -> str:
    """'test 91.2% +- 0.4 (3 seeds); within 1 point: the 95% interval ...'."""
    paired, found = r.paired, r.accuracies
    if not found:
        return f"every seed diverged ({', '.join(run.outcome for run in r.runs)})"
    at = f"test {mean_std(found)}"
    return at if paired is None else f"{at}; {paired.verdict(r.margin)}"


def timed(r: E2EResult) -> str:
    """'1.61x the original network (resnet18/w64@32px)', or why there is no speed-up."""
    if not r.tuned:
        return "not every kernel got a schedule: no speedup"
    return f"{r.baseline_latency_ms / r.latency_ms:.2f}x the original network ({r.deploy})"


FISHER = JobKind(
    "fisher",
    "core.train.handlers:fisher_job",
    FisherPayload,
    FisherResult,
    record_score,
    screened,
    cluster=TaskResources(),
)
TRAIN = JobKind(
    "train",
    "core.train.handlers:train_job",
    TrainPayload,
    TrainResult,
    record_score,
    trained,
    cluster=TaskResources(gpu=True),
)
TEST = JobKind(
    "test",
    "core.train.handlers:held_out_job",
    HeldOutPayload,
    HeldOutResult,
    record_score,
    tested,
    cluster=TaskResources(gpu=True),
)
E2E = JobKind("e2e", "core.train.handlers:e2e_job", E2EPayload, E2EResult, record_score, timed)
