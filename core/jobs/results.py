"""The one place where a finished job's result becomes store rows, by job kind.

Kinds without an entry keep their result only as JSON on the job row.
"""
from __future__ import annotations

from core.store import InvalidResult, Store
from core.store.records import MEASUREMENT_FIELDS


def _measurement(store: Store, job, result: dict) -> None:
    """measure and transfer jobs (core.compile.jobs) return the measurement fields among details
    (target, tuning folder, torch's spread, reused schedules, ...) that stay on the job row."""
    if job.operator_id is None:
        raise InvalidResult("the job names no operator to attach a measurement to")
    fields = {key: value for key, value in result.items() if key in MEASUREMENT_FIELDS}
    bindings = job.payload.get("bindings") or {}
    store.add_measurement(job.operator_id, job.device_id, {"bindings": bindings, **fields}, job_id=job.id)


def _score(store: Store, job, result: dict) -> None:
    if job.operator_id is None:
        raise InvalidResult("the job names no operator to attach a score to")
    store.add_score(job.operator_id, result, job_id=job.id)


def _nested_score(store: Store, job, result: dict) -> None:
    """fisher, train and e2e jobs (core.train.jobs) keep their score fields under 'score',
    beside details that stay on the job row (original network's score, replaced layers)."""
    if not isinstance(result.get("score"), dict):
        raise InvalidResult("the result has no 'score' object with the score fields")
    _score(store, job, result["score"])


RECORDERS = {"measure": _measurement, "transfer": _measurement, "score": _score, "fisher": _nested_score,
             "train": _nested_score, "e2e": _nested_score}


def record_result(store: Store, job, result: dict) -> None:
    """Write the rows for `result` inside the caller's transaction (InvalidResult if malformed)."""
    recorder = RECORDERS.get(job.kind)
    if recorder is not None:
        recorder(store, job, result)
