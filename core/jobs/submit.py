"""One way to queue work, for the window and every command alike: a request (what the user
asked for: measure these operators, evaluate their accuracy, run this search) plans its
jobs inside one write transaction, and submit() queues them all or none. Every payload is
its kind's typed contract (core.jobs.contract), so nothing malformed reaches a worker. Each
operator is read once (Subject.graph) for saving, versioning and planning alike.

Jobs of an operator being edited carry its input key and content hash, so that editing it
again cancels them (JobQueue.cancel_stale) instead of showing a result of an old version."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from core.ir.graph import OperatorGraph
from core.ir.serialize import content_hash, graph_from_document
from core.store import Store
from core.store.stored_values import stored_json

from .contract import Payload
from .queue import JobQueue
from .registry import job_kinds


@dataclass(frozen=True)
class Subject:
    """One operator a request is about."""

    document: dict
    name: str
    origin: str = "hand-made"
    bindings: dict[str, int] | None = None  # its own bindings, used when the request has none
    input_key: str | None = None  # set for the operator open in an editor (or a file)
    sequence: dict | None = None  # the transformation sequence it came from, if known (its schedule can be timed)
    parsed: OperatorGraph | None = field(default=None, compare=False, repr=False)  # the document's graph, if read

    @cached_property
    def graph(self) -> OperatorGraph:
        """The document's graph: the one its caller read already, or read here, once."""
        return self.parsed if self.parsed is not None else graph_from_document(self.document, source=self.name)

    def save(self, store: Store) -> tuple[int, str | None]:
        """(its operator id in the store, saved if new; the input version its jobs carry)."""
        operator_id = store.add_operator(self.graph, self.name, self.origin, self.sequence)
        return operator_id, content_hash(self.graph) if self.input_key else None


def result_subjects(store: Store, rows, each_size: bool = True) -> list[Subject]:
    """The operators of results rows (the store's results view) as subjects: one per operator
    and set of sizes (`each_size`: measuring again at each result's sizes), or one per
    operator at its first result's sizes (evaluating its accuracy, where sizes come from the
    backbone)."""
    subjects: dict[tuple, Subject] = {}
    for row in rows:
        bindings = (
            stored_json(row["bindings"], "results", row["result_key"], "bindings") if row["bindings"] else None
        ) or {}
        key = (row["operator_id"], json.dumps(bindings, sort_keys=True) if each_size else None)
        if key not in subjects:
            operator = store.operator(row["operator_id"])
            document = operator["document"] if each_size else {**operator["document"], "bindings": bindings}
            name = operator["name"] or f"operator {row['operator_id']}"
            subjects[key] = Subject(
                document,
                name,
                operator["origin"] or "hand-made",
                bindings if each_size else None,
                sequence=store.operator_sequence(row["operator_id"]),
            )
    return list(subjects.values())


@dataclass(frozen=True)
class PlannedJob:
    payload: Payload
    operator_id: int | None = None
    device_id: int | None = None
    input_key: str | None = None
    input_version: str | None = None


@dataclass
class Queued:
    ids: list[int] = field(default_factory=list)  # in the order the request planned them
    notes: list[str] = field(default_factory=list)  # what was left out, and why


class Request(Protocol):
    def plan(self, store: Store) -> tuple[list[PlannedJob], list[str]]:
        """The jobs to queue (saving the operators they are about) and notes on what was left
        out; called inside submit's write transaction. TesseraError: nothing is queued."""
        ...


def submit(store: Store, request: Request) -> Queued:
    """Queue every job the request plans, in one transaction: all of them or none."""
    queue = JobQueue(store)
    kinds = job_kinds()
    with store.write():
        planned, notes = request.plan(store)
        ids = []
        for job in planned:
            kind = kinds.get(job.payload.kind)
            if kind is None or not isinstance(job.payload, kind.payload):
                raise TypeError(f"{type(job.payload).__name__} is not the payload of a declared job kind")
            ids.append(
                queue.submit(
                    kind.name,
                    job.payload.to_dict(),
                    operator_id=job.operator_id,
                    device_id=job.device_id,
                    input_key=job.input_key,
                    input_version=job.input_version,
                )
            )
    return Queued(ids, notes)
