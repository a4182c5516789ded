"""Every job kind in one registry: the handler a worker runs (a 'module:function' path,
imported only when a job of that kind runs, so TVM and torch stay out of the window and
the supervisor), the types of its payload and of its result (core.jobs.contract), how a
finished job's result becomes store rows, the line the job monitor shows for it, and whether
a cluster may run it.

A finished job's result is read as its kind's type before anything is written: a result
that breaks it fails the job with the message naming the field, and writes nothing. Records
and summaries take the typed result, never a dict.

Each kind is a JobKind constant of the package that owns it, declared as an entry point of
the group "tessera.job_kinds" in pyproject.toml, the one list of them: this package names
no package above it. Their modules are light (no torch, no TVM) and are loaded the first
time the registry is asked, in the order of their names; payload and result
classes live apart from them, in payloads.py and results.py (a measurement in
core.store.measurement)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from ..typed_json import JsonRecord
from .contract import Payload

#: the entry-point group that declares the kinds (pyproject.toml's [project.entry-points])
GROUP = "tessera.job_kinds"


@dataclass(frozen=True)
class TaskResources:
    """What one job of a kind takes on a cluster node: CPUs, and a GPU if it can use one
    (asked for only where the cluster has GPUs; elsewhere it runs on CPUs)."""

    cpus: float = 1.0
    gpu: bool = False


@dataclass(frozen=True)
class JobKind:
    name: str
    #: 'module:function', called as handler(payload: dict, ctx) -> an instance of `result`
    #: (or its JSON)
    handler: str
    payload: type[Payload]
    result: type[JsonRecord]
    #: record(store, job, result) writes the typed result's rows inside the caller's
    #: transaction; None: the result stays only on the job row
    record: Callable[[Any, Any, Any], None] | None = None
    summary: Callable[[Any], str] | None = None  # the job monitor's line for a typed result
    cluster: TaskResources | None = None  # a cluster may run it, each job taking these


_KINDS: dict[str, JobKind] = {}


def job_kinds() -> Mapping[str, JobKind]:
    """Every declared kind by name, loaded from the entry points on first use."""
    if not _KINDS:
        for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
            kind = point.load()
            if not isinstance(kind, JobKind) or kind.name != point.name:
                raise TypeError(f"entry point {point.name} = {point.value} is not the JobKind named {point.name!r}")
            _KINDS[kind.name] = kind
        if not _KINDS:
            raise RuntimeError(f"no job kinds: the package's metadata ({GROUP} entry points) is missing")
    return _KINDS


def handlers() -> dict[str, str]:
    """kind -> 'module:function' of every declared kind (what workers run by default)."""
    return {name: kind.handler for name, kind in job_kinds().items()}


def cluster_kinds() -> dict[str, TaskResources]:
    """The kinds a cluster may run, with what each job takes there. The others stay in
    local workers: measurements time kernels on this machine's or RPC devices, searches
    write to the store as they go."""
    return {name: kind.cluster for name, kind in job_kinds().items() if kind.cluster is not None}


def read_result(kind: str, data: Any) -> Any:
    """A job's result (its JSON) read as its kind's type: InvalidResult naming the field when it
    breaks it. The result of a kind not declared (a test's own) stays as it is."""
    declared = job_kinds().get(kind)
    return data if declared is None else declared.result.from_dict(data)


def job_result(job) -> Any:
    """A finished job's result as its kind's type (InvalidResult if it breaks it: a result kept
    by an older Tessera may)."""
    return read_result(job.kind, job.result)


def record_result(store, job, data: Any) -> tuple[Any, str]:
    """Read a job's result as its kind's type and write its rows inside the caller's
    transaction. -> (the JSON the job row keeps, the job monitor's line for it). InvalidResult,
    naming the field, when the result breaks its type: nothing is written then."""
    result = read_result(job.kind, data)
    declared = job_kinds().get(job.kind)
    if declared is None:
        return data, "done"
    if declared.record is not None:
        declared.record(store, job, result)
    return result.to_dict(), result_summary(job.kind, result)


def result_summary(kind: str, result: Any) -> str:
    """The message a finished job shows (the job monitor's Message column), from its typed result."""
    declared = job_kinds().get(kind)
    return "done" if declared is None or declared.summary is None else declared.summary(result)
