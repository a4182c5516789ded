"""Entry points that run in worker processes: the job system's `measure_job` and
`transfer_job`, and the one-shot calls `tessera measure` / `tessera codegen` / `tessera tune` make through
core.jobs.isolate.call_in_subprocess (JSON in, JSON out).

The operator arrives as its document, is read once, and is lowered in canonical form (nodes
renamed n0, n1, ... as for its content hash; core.ir.serialize.canonical_graph), so that every
document with the same content hash gives the same TVM stage names and shares one tuning
database. The handlers sit on top of core.compile: they read the payload, find the device
and the tuning folder, and call measure_operator (which tunes first when asked), measure_fastest (algorithm
'auto') or transfer_operator over a workload, a kernel and a place. Imports TVM: worker processes
only (the job registry names the handlers by path)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import psutil

from ..codegen.to_tvm import tvmscript
from ..codegen.torch_plan import make_plan
from ..devices import LOCAL, Device
from ..devices.device import DEFAULT_TARGET
from ..ir.graph import OperatorGraph
from ..ir.serialize import canonical_graph, content_hash, graph_from_document
from ..jobs.errors import JobCancelled
from ..store.measurement import Measurement
from .algorithms import AUTO, algorithm
from .auto import measure_fastest
from .errors import CompileError
from .kernels.protocol import make_kernel
from .measure import measure_operator
from .payloads import MeasurePayload, TransferPayload
from .place import place_for
from .settings import Settings
from .target import core_count
from .transfer_operator import transfer_operator
from .transfer_sources import payload_sources
from .tune import tuning_dir, tuning_root
from .workload import Workload


def measure_job(payload: dict, ctx) -> Measurement:
    """payload: core.compile.payloads.MeasurePayload's JSON (the device's description travels in
    it, so a worker needs no store to find the device). ctx: progress(fraction, message) and
    cancelled()."""
    p = MeasurePayload.from_dict(payload)
    own, graph, bindings = _operator(p.operator, p.bindings)
    algorithm(p.algorithm).check(own, bindings)  # the error names the user's nodes
    device = _device(p)
    if _is_gpu(device) and not p.tune_trials:
        raise CompileError(
            f"device {device.name} is a GPU ({_kind(device)}): untuned kernels do not run "
            f"there (their loops are not bound to threads); tune them (tune_trials > 0)"
        )
    sized = {**_used(graph, bindings), "N": p.batch}
    settings = Settings(
        batch=p.batch,
        tune_trials=p.tune_trials,
        cost_model=p.cost_model,
        work_dir=tuning_dir(content_hash(own), sized, device.name, _root(p)),
        repeat=p.repeat,
        min_repeat_ms=p.min_repeat_ms,
        algorithm=p.algorithm,
        tiles=p.tiles,
        sequence=p.sequence,
    )
    check_cancelled = _canceller(ctx, f"measuring {graph.name or 'the operator'}")
    with place_for(device, core_count()) as place:
        ctx.progress(0.01, "generating TVM and torch code")
        workload = Workload.prepare(graph, bindings, settings.batch, settings.seed)
        if settings.algorithm == AUTO:
            return measure_fastest(workload, place, settings, ctx.progress, check_cancelled)
        kernel = make_kernel(workload, place, settings)
        return measure_operator(workload, kernel, place, settings, ctx.progress, check_cancelled, _started(ctx))


def measure_call(payload: dict, progress: Callable[[float, str], None] | None = None) -> Measurement:
    """measure_job for call_in_subprocess: progress goes to the caller, nothing cancels it.
    TVM and MetaSchedule print to standard output; in this child that output is sent to
    standard error, so the caller's own standard output stays clean (e.g. for --json)."""
    quiet_stdout()
    return measure_job(payload, _CallContext(progress))


def quiet_stdout() -> None:
    """In a child of call_in_subprocess: what TVM prints goes to standard error."""
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())


def transfer_job(payload: dict, ctx) -> Measurement:
    """payload: core.compile.payloads.TransferPayload's JSON (a CPU device; sources default to
    the tuning root)."""
    p = TransferPayload.from_dict(payload)
    _, graph, bindings = _operator(p.operator, p.bindings)
    device = _device(p)
    if _is_gpu(device):  # the untuned default, kept when no schedule applies, would not run there
        raise CompileError(
            f"transfer-tuning runs on CPU devices (an llvm target); {device.name} is "
            f"{_kind(device)}: tune it from scratch"
        )
    settings = Settings(batch=p.batch, repeat=p.repeat, min_repeat_ms=p.min_repeat_ms)
    sources = payload_sources(list(p.sources) if p.sources else None, _root(p))
    check_cancelled = _canceller(ctx, f"transfer-tuning {graph.name or 'the operator'}")
    with place_for(device, core_count()) as place:
        ctx.progress(0.01, "generating TVM and torch code")
        workload = Workload.prepare(graph, bindings, settings.batch, settings.seed)
        return transfer_operator(
            workload, place, settings, sources, p.top_k, ctx.progress, check_cancelled, _started(ctx)
        )


def transfer_call(payload: dict, progress: Callable[[float, str], None] | None = None) -> Measurement:
    """transfer_job for call_in_subprocess, like measure_call."""
    quiet_stdout()
    return transfer_job(payload, _CallContext(progress))


def tvmscript_call(operator: dict, bindings: dict, batch: int = 1) -> str:
    """The operator's PrimFunc as TVMScript, for `tessera codegen --target tvmscript`."""
    graph = graph_from_document(operator)
    return tvmscript(graph, bindings, batch)


def _canceller(ctx, doing: str) -> Callable[[], None]:
    """check_cancelled() for a job: JobCancelled saying what was cancelled."""

    def check_cancelled() -> None:
        if ctx.cancelled():
            raise JobCancelled(f"{doing} was cancelled")

    return check_cancelled


def _started(ctx) -> float | None:
    """When the job's running time began (time.time()), which its progress is a share of
    (core.compile.phases): its attempt's start, or this process's for a one-shot call (None:
    from now on)."""
    job = getattr(ctx, "job", None)
    return job.started if job is not None else getattr(ctx, "started", None)


class _CallContext:
    def __init__(self, progress: Callable[[float, str], None] | None):
        self._progress = progress
        self.started = psutil.Process().create_time()  # the caller waits from here

    def progress(self, fraction: float, message: str = "") -> None:
        if self._progress is not None:
            self._progress(fraction, message)

    @staticmethod
    def cancelled() -> bool:
        return False


def _operator(document, bindings) -> tuple[OperatorGraph, OperatorGraph, dict[str, int]]:
    """The document's own graph (its errors name the user's nodes; checked first), the
    canonical graph (what is lowered), and the bindings: the document's own, overridden by
    the request's. The document is read once per job."""
    if not isinstance(document, dict):
        raise CompileError("the request has no operator document")
    if not isinstance(bindings, dict):
        raise CompileError(f"bindings must be an object such as {{'C_in': 64}}, got {bindings!r}")
    own = graph_from_document(document)
    make_plan(own, bindings)
    return own, canonical_graph(own), {**own.bindings, **bindings}


def _root(p: MeasurePayload | TransferPayload) -> Path:
    """Where the payload's tuning databases are kept."""
    return Path(p.tuning_root).expanduser() if p.tuning_root else tuning_root()


def _device(p: MeasurePayload | TransferPayload) -> Device:
    """The device the payload names, as the payload describes it."""
    name, config = p.device, p.device_config
    if config is None:
        if name != LOCAL.name:
            raise CompileError(
                f"unknown device {name!r}: the request does not describe it (no device_config); "
                f"add it with `tessera device add` and submit with --device {name}"
            )
        return LOCAL
    device = Device.from_dict(config)
    if device.name != name:
        raise CompileError(f"the request names device {name!r} but describes {device.name!r}")
    return device


def _is_gpu(device: Device) -> bool:
    """Untuned kernels do not run there: their loops are not bound to threads."""
    return _kind(device) != "llvm"


def _kind(device: Device) -> str:
    """The kind of the device's TVM target ('llvm' for this machine)."""
    return (device.target or DEFAULT_TARGET)["kind"]


def _used(graph: OperatorGraph, bindings: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in bindings.items() if k in graph.mentioned_variables()}
