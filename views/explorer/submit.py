"""Evaluate and Tune requests (core.compile.requests.MeasureRequest) become jobs in the
store's queue: the request's jobs for each operator and bindings set, all queued in one
transaction.

Jobs of an operator being edited carry its input key and content hash, so that editing
it again cancels them (JobQueue.cancel_stale) instead of showing a result of an old version."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.compile.requests import MeasureRequest
from core.devices import get_device
from core.ir.serialize import content_hash
from core.jobs.queue import JobQueue
from core.store import Store


@dataclass(frozen=True)
class Target:
    """One operator to measure."""

    document: dict
    name: str
    origin: str = "hand-made"
    bindings: dict[str, int] | None = None  # its own bindings, used when the request has none
    input_key: str | None = None  # set for the operator open in the editor


@dataclass
class Queued:
    ids: list[int] = field(default_factory=list)  # in order: target by target, bindings set by set
    notes: list[str] = field(default_factory=list)  # what was left out, and why (e.g. an algorithm)


def submit(store: Store, queue: JobQueue, targets: list[Target], request: MeasureRequest) -> Queued:
    """Queue the jobs; nothing is queued if one target cannot take the request."""
    device = get_device(store, request.device)
    queued = Queued()
    with store.write():
        for target in targets:
            operator_id = store.add_operator(target.document, target.name, target.origin)
            version = content_hash(target.document) if target.input_key else None
            for bindings in request.bindings_sets or (target.bindings or {},):
                jobs, note = request.jobs(target.document, bindings, device)
                if note and f"{target.name}: {note}" not in queued.notes:
                    queued.notes.append(f"{target.name}: {note}")
                queued.ids += [
                    queue.submit(
                        kind,
                        payload,
                        operator_id=operator_id,
                        device_id=device.id,
                        input_key=target.input_key,
                        input_version=version,
                    )
                    for kind, payload in jobs
                ]
    return queued
