"""The compile side's job kinds: "measure" (time an operator's kernel, tuned or not) and
"transfer" (tune it by reusing schedules of its kernel class). Both return a measurement
(core.store.measurement), which the store records."""

from __future__ import annotations

from dataclasses import replace

from ..jobs.registry import JobKind
from ..store import InvalidResult
from ..store.measurement import Measurement
from .payloads import MeasurePayload, TransferPayload


def record_measurement(store, job, measurement: Measurement) -> None:
    """The measurement becomes a row of the store (its sizes those of the request when it names
    none); the whole result stays on the job row."""
    if job.operator_id is None:
        raise InvalidResult("the job names no operator to attach a measurement to")
    if not measurement.bindings:
        measurement = replace(measurement, bindings=job.payload.get("bindings") or {})
    store.add_measurement(job.operator_id, job.device_id, measurement, job_id=job.id)


def measured(m: Measurement) -> str:
    """'0.0367 ms, 10.2x PyTorch, max error 3.1e-07' (no PyTorch when timed on another device),
    then where a slower tuned schedule lost to TVM's default and why a timing is in doubt."""
    parts = [f"{m.latency_ms:.4g} ms"]
    if m.speedup:
        parts.append(f"{m.speedup:.2f}x PyTorch")
    if m.max_abs_error is not None:
        parts.append(f"max error {m.max_abs_error:.2g}")
    source = m.schedule_source or ""
    notes = [source] if source.startswith("untuned (") else []
    notes += [m.timing_note] if m.timing_note else []
    return ", ".join(parts) + "".join(f"; {note}" for note in notes)


def transferred(m: Measurement) -> str:
    """What transfer-tuning reused, so a result kept untuned says why."""
    transfer = m.transfer or {}
    if not transfer.get("found"):
        why = "no tuned schedule of its kernel class in the sources: TVM's default kept"
    elif not transfer.get("applied"):
        why = f"none of {transfer['found']} tuned schedule(s) applied: TVM's default kept"
    else:
        kept = "kept the fastest" if m.tuned else "none beat TVM's default"
        why = f"{transfer['applied']} of {transfer['found']} tuned schedule(s) applied, {kept}"
    return f"{measured(m)}; {why}"


MEASURE = JobKind(
    "measure", "core.compile.handlers:measure_job", MeasurePayload, Measurement, record_measurement, measured
)
TRANSFER = JobKind(
    "transfer", "core.compile.handlers:transfer_job", TransferPayload, Measurement, record_measurement, transferred
)
