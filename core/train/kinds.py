"""The accuracy side's job kinds. Their results carry the store's score fields under
"score" (recorded as a score of the operator); everything else stays on the job row.
Fisher Potential and training may run on a cluster (training uses a GPU where there is
one); "e2e" times kernels on this machine, so it stays in local workers."""

from __future__ import annotations

from ..jobs.registry import JobKind, TaskResources, declare
from ..store import InvalidResult
from .payloads import E2EPayload, FisherPayload, TrainPayload


def record_score(store, job, result: dict) -> None:
    if job.operator_id is None:
        raise InvalidResult("the job names no operator to attach a score to")
    if not isinstance(result.get("score"), dict):
        raise InvalidResult("the result has no 'score' object with the score fields")
    store.add_score(job.operator_id, result["score"], job_id=job.id)


FISHER = declare(
    JobKind("fisher", "core.train.handlers:fisher_job", FisherPayload, record_score, cluster=TaskResources())
)
TRAIN = declare(
    JobKind("train", "core.train.handlers:train_job", TrainPayload, record_score, cluster=TaskResources(gpu=True))
)
E2E = declare(JobKind("e2e", "core.train.handlers:e2e_job", E2EPayload, record_score))
