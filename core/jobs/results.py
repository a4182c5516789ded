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


RECORDERS = {
    "measure": _measurement,
    "transfer": _measurement,
    "score": _score,
    "fisher": _nested_score,
    "train": _nested_score,
    "e2e": _nested_score,
}


def _measured(result: dict) -> str:
    """'0.0367 ms, 10.2x PyTorch, max error 3.1e-07' (no PyTorch when timed on another device),
    then where a slower tuned schedule lost to TVM's default and why a timing is in doubt."""
    parts = [f"{result['latency_ms']:.4g} ms"]
    if result.get("speedup_vs_torch"):
        parts.append(f"{result['speedup_vs_torch']:.2f}x PyTorch")
    if result.get("max_abs_error") is not None:
        parts.append(f"max error {result['max_abs_error']:.2g}")
    source = result.get("schedule_source") or ""
    notes = [source] if source.startswith("untuned (") else []
    notes += [result["timing_note"]] if result.get("timing_note") else []
    return ", ".join(parts) + "".join(f"; {note}" for note in notes)


def _transferred(result: dict) -> str:
    """What transfer-tuning reused, so a result kept untuned says why."""
    if not result.get("found"):
        why = "no tuned schedule of its kernel class in the sources: TVM's default kept"
    elif not result.get("applied"):
        why = f"none of {result['found']} tuned schedule(s) applied: TVM's default kept"
    else:
        kept = "kept the fastest" if result.get("tuned") else "none beat TVM's default"
        why = f"{result['applied']} of {result['found']} tuned schedule(s) applied, {kept}"
    return f"{_measured(result)}; {why}"


SUMMARIES = {"measure": _measured, "transfer": _transferred}


def result_summary(kind: str, result: dict) -> str:
    """The message a finished job shows (the job monitor's Message column)."""
    summary = SUMMARIES.get(kind)
    try:
        return summary(result) if summary is not None else "done"
    except (KeyError, TypeError, ValueError):
        return "done"  # a result the recorder accepted but this line cannot describe


def record_result(store: Store, job, result: dict) -> None:
    """Write the rows for `result` inside the caller's transaction (InvalidResult if malformed)."""
    recorder = RECORDERS.get(job.kind)
    if recorder is not None:
        recorder(store, job, result)
