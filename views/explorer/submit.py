"""Evaluate and Tune requests become measure jobs (core.compile.jobs:measure_job) in the
store's queue: one job per operator and bindings set, all queued in one transaction.

Jobs of an operator being edited carry its input key and content hash, so that editing
it again cancels them (JobQueue.cancel_stale) instead of showing a result of an old version."""
from __future__ import annotations

from dataclasses import dataclass

from core.devices import get_device
from core.ir.serialize import content_hash
from core.jobs.queue import JobQueue
from core.store import Store

MEASURE = "measure"


@dataclass(frozen=True)
class Target:
    """One operator to measure."""
    document: dict
    name: str
    origin: str = "hand-made"
    bindings: dict[str, int] | None = None  # its own bindings, used when the request has none
    input_key: str | None = None            # set for the operator open in the editor


@dataclass(frozen=True)
class MeasureRequest:
    device: str = "local"                            # a device of the store (core.devices)
    bindings_sets: tuple[dict[str, int], ...] = ()  # empty: each target's own bindings
    trials: int = 0                                  # MetaSchedule trials; 0 measures the default schedule

    @property
    def tune(self) -> bool:
        return self.trials > 0


def submit(store: Store, queue: JobQueue, targets: list[Target], request: MeasureRequest) -> list[int]:
    """Queue the jobs; returns their ids in order (target by target, bindings set by set)."""
    device = get_device(store, request.device)
    ids = []
    with store.write():
        for target in targets:
            operator_id = store.add_operator(target.document, target.name, target.origin)
            version = content_hash(target.document) if target.input_key else None
            for bindings in request.bindings_sets or (target.bindings or {},):
                payload = {"operator": target.document, "bindings": dict(bindings),
                           "tune_trials": request.trials, **device.job_fields()}
                ids.append(queue.submit(MEASURE, payload, operator_id=operator_id, device_id=device.id,
                                        input_key=target.input_key, input_version=version))
    return ids
