"""Every job kind in one registry: the handler a worker runs (a 'module:function' path,
imported only when a job of that kind runs, so TVM and torch stay out of the window and
the supervisor), the payload's contract, how a finished job's result becomes store rows,
the line the job monitor shows for it, and whether a cluster may run it.

Each kind is declared by the package that owns it. The modules that declare kinds are
light (no torch, no TVM) and are imported the first time the registry is asked, in the
order of DECLARED_IN, the one list of them (nothing else imports them, so the kinds are
always listed in that order); payload classes live apart from them, in payloads.py."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .contract import Payload

DECLARED_IN = ("core.compile.kinds", "core.train.kinds", "core.search.kinds")


@dataclass(frozen=True)
class TaskResources:
    """What one job of a kind takes on a cluster node: CPUs, and a GPU if it can use one
    (asked for only where the cluster has GPUs; elsewhere it runs on CPUs)."""

    cpus: float = 1.0
    gpu: bool = False


@dataclass(frozen=True)
class JobKind:
    name: str
    handler: str  # 'module:function', called as handler(payload: dict, ctx) -> dict
    payload: type[Payload]
    #: record(store, job, result) writes the result's rows inside the caller's transaction
    #: (InvalidResult if malformed); None: the result stays only on the job row
    record: Callable[[Any, Any, dict], None] | None = None
    summary: Callable[[dict], str] | None = None  # the job monitor's line for a result
    cluster: TaskResources | None = None  # a cluster may run it, each job taking these


_KINDS: dict[str, JobKind] = {}
_loaded = False


def declare(kind: JobKind) -> JobKind:
    if kind.name in _KINDS and _KINDS[kind.name] != kind:
        raise ValueError(f"job kind {kind.name!r} is declared twice")
    _KINDS[kind.name] = kind
    return kind


def job_kinds() -> Mapping[str, JobKind]:
    global _loaded
    if not _loaded:
        for module in DECLARED_IN:
            importlib.import_module(module)
        _loaded = True
    return _KINDS


def handlers() -> dict[str, str]:
    """kind -> 'module:function' of every declared kind (what workers run by default)."""
    return {name: kind.handler for name, kind in job_kinds().items()}


def cluster_kinds() -> dict[str, TaskResources]:
    """The kinds a cluster may run, with what each job takes there. The others stay in
    local workers: measurements time kernels on this machine's or RPC devices, searches
    write to the store as they go."""
    return {name: kind.cluster for name, kind in job_kinds().items() if kind.cluster is not None}


def record_result(store, job, result: dict) -> None:
    """Write the rows for `result` inside the caller's transaction (InvalidResult if malformed)."""
    kind = job_kinds().get(job.kind)
    if kind is not None and kind.record is not None:
        kind.record(store, job, result)


def result_summary(kind: str, result: dict) -> str:
    """The message a finished job shows (the job monitor's Message column)."""
    declared = job_kinds().get(kind)
    if declared is None or declared.summary is None:
        return "done"
    try:
        return declared.summary(result)
    except (KeyError, TypeError, ValueError):
        return "done"  # a result the recorder accepted but this line cannot describe
