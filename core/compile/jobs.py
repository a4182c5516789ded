"""Entry points that run in worker processes: the job system's `measure_job` and
`transfer_job`, and the one-shot calls `tessera measure` / `tessera codegen` / `tessera tune` make through
core.jobs.isolate.call_in_subprocess (JSON in, JSON out).

The operator arrives as its document and is lowered in canonical form (nodes
renamed n0, n1, ... as for its content hash), so that every document with the
same content hash gives the same TVM stage names and shares one tuning
database. TVM is imported only when a call runs."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from ..codegen.torch_plan import make_plan
from ..ir.graph import OperatorGraph
from ..ir.serialize import canonical_document, content_hash, graph_from_document
from ..jobs.errors import JobCancelled
from .algorithms import ALGORITHMS, gspc_convolution
from .errors import CompileError


def measure_job(payload: dict, ctx) -> dict:
    """payload: {"operator": document, "bindings": {...}, "tune_trials": int, "device": "local" or the name
    of an RPC device with "device_config" its description (core.devices.Device.job_fields(): the submitter
    embeds it, so a worker needs no store to find the device),
    optional "batch", "cost_model" ("xgb" | "random"), "tuning_root" (folder), "repeat", "min_repeat_ms",
    "algorithm" ("default" | "gspc"), "tiles" ([T_O, T_I], gspc only; tune_trials then sizes its tile grid)}.
    ctx: progress(fraction, message) and cancelled(). Returns core.compile.measure's result dict."""
    from .measure import Settings, measure_operator
    from .remote import on_device
    from .target import core_count
    from .tune import tuning_dir, tuning_root

    document = payload.get("operator")
    graph, bindings = _operator(document, payload.get("bindings") or {})
    if payload.get("algorithm") == "gspc":
        gspc_convolution(graph_from_document(document), bindings)  # the error names the user's nodes
    device = _device(payload)
    batch = _positive(payload, "batch", 1)
    trials = _positive(payload, "tune_trials", 0, allow_zero=True)
    if _is_gpu(device) and not trials:
        raise CompileError(
            f"device {device.name} is a GPU ({device.target['kind']}): untuned kernels do not run "
            f"there (their loops are not bound to threads); tune them (tune_trials > 0)"
        )
    sized = {**_used(graph, bindings), "N": batch}
    root = Path(payload["tuning_root"]).expanduser() if payload.get("tuning_root") else tuning_root()
    settings = Settings(
        batch=batch,
        tune_trials=trials,
        cost_model=payload.get("cost_model", "xgb"),
        work_dir=tuning_dir(content_hash(document), sized, device.name, root),
        threads=core_count(),
        repeat=_positive(payload, "repeat", 10),
        min_repeat_ms=_milliseconds(payload, "min_repeat_ms", 100.0),
        algorithm=payload.get("algorithm", "default"),
        tiles=_tiles(payload),
    )

    def check_cancelled() -> None:
        if ctx.cancelled():
            raise JobCancelled(f"measuring {graph.name or 'the operator'} was cancelled")

    with on_device(device) as remote:
        return measure_operator(graph, bindings, settings, ctx.progress, check_cancelled, remote)


def variant_payloads(payload: dict) -> tuple[list[dict], str]:
    """The measure payloads comparing algorithm x tuned/untuned for one operator, sizes and
    device: default and gspc, untuned and (with the payload's tune_trials > 0) tuned; gspc
    only for grouped convolutions. -> (payloads, why gspc was left out, or "")."""
    document, bindings = payload.get("operator"), payload.get("bindings") or {}
    _graph, bindings = _operator(document, bindings)
    trials = _positive(payload, "tune_trials", 0, allow_zero=True)
    try:
        gspc_convolution(graph_from_document(document), bindings)
        algorithms, skipped = ALGORITHMS, ""
    except CompileError as e:
        algorithms, skipped = ("default",), str(e)
    base = {k: v for k, v in payload.items() if k not in ("algorithm", "tiles", "tune_trials")}
    return [
        {
            **base,
            "algorithm": algorithm,
            "tune_trials": budget,
            **({"tiles": payload["tiles"]} if algorithm == "gspc" and "tiles" in payload else {}),
        }
        for algorithm in algorithms
        for budget in sorted({0, trials})
    ], skipped


def measure_call(payload: dict, progress: Callable[[float, str], None] | None = None) -> dict:
    """measure_job for call_in_subprocess: progress goes to the caller, nothing cancels it.
    TVM and MetaSchedule print to standard output; in this child that output is sent to
    standard error, so the caller's own standard output stays clean (e.g. for --json)."""
    quiet_stdout()
    return measure_job(payload, _CallContext(progress))


def quiet_stdout() -> None:
    """In a child of call_in_subprocess: what TVM prints goes to standard error."""
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())


def transfer_job(payload: dict, ctx) -> dict:
    """payload: {"operator": document, "bindings": {...}, "device" (as for measure_job; a CPU
    device), optional "sources" (tuning folders or results stores to reuse schedules from;
    default: "tuning_root" or the tuning root), "top_k" (schedules tried per tuned kernel,
    default 1), "batch", "repeat", "min_repeat_ms"}. Returns core.compile.transfer_operator's
    result dict."""
    from .measure import Settings
    from .remote import on_device
    from .target import core_count
    from .transfer_operator import transfer_operator
    from .transfer_sources import payload_sources
    from .tune import tuning_root

    graph, bindings = _operator(payload.get("operator"), payload.get("bindings") or {})
    device = _device(payload)
    if _is_gpu(device):  # the untuned default, kept when no schedule applies, would not run there
        raise CompileError(
            f"transfer-tuning runs on CPU devices (an llvm target); {device.name} is "
            f"{device.target['kind']}: tune it from scratch"
        )
    root = Path(payload["tuning_root"]).expanduser() if payload.get("tuning_root") else tuning_root()
    settings = Settings(
        batch=_positive(payload, "batch", 1),
        threads=core_count(),
        repeat=_positive(payload, "repeat", 10),
        min_repeat_ms=_milliseconds(payload, "min_repeat_ms", 100.0),
    )

    def check_cancelled() -> None:
        if ctx.cancelled():
            raise JobCancelled(f"transfer-tuning {graph.name or 'the operator'} was cancelled")

    with on_device(device) as remote:
        return transfer_operator(
            graph,
            bindings,
            payload_sources(payload.get("sources"), root),
            settings,
            _positive(payload, "top_k", 1),
            ctx.progress,
            check_cancelled,
            remote,
        )


def transfer_call(payload: dict, progress: Callable[[float, str], None] | None = None) -> dict:
    """transfer_job for call_in_subprocess, like measure_call."""
    quiet_stdout()
    return transfer_job(payload, _CallContext(progress))


def tvmscript_call(operator: dict, bindings: dict, batch: int = 1) -> str:
    """The operator's PrimFunc as TVMScript, for `tessera codegen --target tvmscript`."""
    from ..codegen.to_tvm import tvmscript

    graph = graph_from_document(operator)
    return tvmscript(graph, bindings, batch)


class _CallContext:
    def __init__(self, progress: Callable[[float, str], None] | None):
        self._progress = progress

    def progress(self, fraction: float, message: str = "") -> None:
        if self._progress is not None:
            self._progress(fraction, message)

    @staticmethod
    def cancelled() -> bool:
        return False


def _operator(document, bindings) -> tuple[OperatorGraph, dict[str, int]]:
    """The canonical graph and the bindings: the document's own, overridden by the request's.
    The document's own graph is checked first, so errors name the user's nodes."""
    if not isinstance(document, dict):
        raise CompileError("the request has no operator document")
    if not isinstance(bindings, dict):
        raise CompileError(f"bindings must be an object such as {{'C_in': 64}}, got {bindings!r}")
    own = graph_from_document(document)
    make_plan(own, bindings)
    graph = graph_from_document(canonical_document(document))
    graph.set_declaration(name=own.name)
    return graph, {**own.bindings, **bindings}


def _device(payload: dict):
    """The device the payload names (core.devices.Device), as the payload describes it."""
    from ..devices import LOCAL, Device

    name, config = payload.get("device", LOCAL.name), payload.get("device_config")
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


def _is_gpu(device) -> bool:
    """Untuned kernels do not run there: their loops are not bound to threads."""
    return not device.is_local and device.target["kind"] != "llvm"


def _used(graph: OperatorGraph, bindings: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in bindings.items() if k in graph.mentioned_variables()}


def _positive(payload: dict, key: str, default: int, allow_zero: bool = False) -> int:
    value = payload.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < (0 if allow_zero else 1):
        raise CompileError(f"{key} must be a {'non-negative' if allow_zero else 'positive'} integer, got {value!r}")
    return value


def _tiles(payload: dict) -> tuple[int, int] | None:
    tiles = payload.get("tiles")
    if tiles is None:
        return None
    if not (
        isinstance(tiles, (list, tuple))
        and len(tiles) == 2
        and all(isinstance(t, int) and not isinstance(t, bool) and t > 0 for t in tiles)
    ):
        raise CompileError(f"tiles must be two positive integers [T_O, T_I], got {tiles!r}")
    return tuple(tiles)


def _milliseconds(payload: dict, key: str, default: float) -> float:
    value = payload.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise CompileError(f"{key} must be a non-negative number of milliseconds, got {value!r}")
    return float(value)
