"""Entry points that run in worker processes: the job system's `measure_job`, and the
one-shot calls `tessera measure` / `tessera codegen` make through
core.jobs.isolate.call_in_subprocess (JSON in, JSON out).

The operator arrives as its document and is lowered in canonical form (nodes
renamed n0, n1, ... as for its content hash), so that every document with the
same content hash gives the same TVM stage names and shares one tuning
database. TVM is imported only when a call runs."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

from ..codegen.torch_plan import make_plan
from ..ir.graph import OperatorGraph
from ..ir.serialize import canonical_document, content_hash, graph_from_document
from ..jobs.errors import JobCancelled
from .errors import CompileError

DEVICES = ("local",)


def measure_job(payload: dict, ctx) -> dict:
    """payload: {"operator": document, "bindings": {...}, "tune_trials": int, "device": "local",
    optional "batch", "cost_model" ("xgb" | "random"), "tuning_root" (folder), "repeat", "min_repeat_ms"}.
    ctx: progress(fraction, message) and cancelled(). Returns core.compile.measure's result dict."""
    from .measure import Settings, measure_operator
    from .target import core_count
    from .tune import tuning_dir, tuning_root

    document = payload.get("operator")
    graph, bindings = _operator(document, payload.get("bindings") or {})
    device = payload.get("device", "local")
    if device not in DEVICES:
        raise CompileError(f"unknown device {device!r}: measurements run on {', '.join(DEVICES)} only")
    batch = _positive(payload, "batch", 1)
    trials = _positive(payload, "tune_trials", 0, allow_zero=True)
    sized = {**_used(graph, bindings), "N": batch}
    root = Path(payload["tuning_root"]).expanduser() if payload.get("tuning_root") else tuning_root()
    settings = Settings(batch=batch, tune_trials=trials, cost_model=payload.get("cost_model", "xgb"),
                        work_dir=tuning_dir(content_hash(document), sized, device, root),
                        threads=core_count(), repeat=_positive(payload, "repeat", 10),
                        min_repeat_ms=_milliseconds(payload, "min_repeat_ms", 100.0))

    def check_cancelled() -> None:
        if ctx.cancelled():
            raise JobCancelled(f"measuring {graph.name or 'the operator'} was cancelled")
    return measure_operator(graph, bindings, settings, ctx.progress, check_cancelled)


def measure_call(payload: dict, progress: Callable[[float, str], None] | None = None) -> dict:
    """measure_job for call_in_subprocess: progress goes to the caller, nothing cancels it.
    TVM and MetaSchedule print to standard output; in this child that output is sent to
    standard error, so the caller's own standard output stays clean (e.g. for --json)."""
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return measure_job(payload, _CallContext(progress))


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


def _used(graph: OperatorGraph, bindings: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in bindings.items() if k in graph.mentioned_variables()}


def _positive(payload: dict, key: str, default: int, allow_zero: bool = False) -> int:
    value = payload.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < (0 if allow_zero else 1):
        raise CompileError(f"{key} must be a {'non-negative' if allow_zero else 'positive'} integer, got {value!r}")
    return value


def _milliseconds(payload: dict, key: str, default: float) -> float:
    value = payload.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise CompileError(f"{key} must be a non-negative number of milliseconds, got {value!r}")
    return float(value)
