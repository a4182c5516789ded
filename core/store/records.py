"""The rows the store keeps for a result: a measurement's (core.store.measurement checks it
when it is read) and a score's, checked field by field here, so a handler's mistake fails its
job with a message naming the field."""

from __future__ import annotations

import math

from core.analysis.summary import summarize
from core.ir.serialize import graph_from_document

from .errors import InvalidResult
from .measurement import Measurement

SCORE_FIELDS = {
    "dataset": "dataset name (required)",
    "backbone": "backbone network name (required)",
    "epochs": "training epochs (default 0: not trained)",
    "accuracy": "final accuracy",
    "accuracy_per_epoch": "accuracy after every epoch, in order",
    "fisher_potential": "Fisher Potential at initialisation",
    "e2e_latency_ms": "whole-network latency with the operator, TVM-compiled, ms",
    "e2e_baseline_ms": "whole-network latency of the original network, same run, ms",
    "e2e_speedup": "e2e_baseline_ms / e2e_latency_ms (derived when absent)",
    "e2e_tuned": "true if both networks ran with tuned kernels (the same budget, the same run)",
    "deploy": "the deployment size the networks were timed at, e.g. 'resnet18/w64@32px'",
    "e2e_torch_ms": "PyTorch's eager latency of the network with the operator, same run, ms",
    "e2e_torch_baseline_ms": "PyTorch's eager latency of the original network, same run, ms",
}


def _check_keys(result: dict, fields: dict, what: str) -> None:
    if not isinstance(result, dict):
        raise InvalidResult(f"a {what} result must be a dict, got {type(result).__name__}")
    unknown = sorted(set(result) - set(fields))
    if unknown:
        raise InvalidResult(
            f"unknown {what} field(s) {', '.join(map(repr, unknown))}; known fields: {', '.join(fields)}"
        )


def _as_number(value, key: str, what: str, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or (positive and value <= 0):
        kind = "a positive number" if positive else "a number"
        raise InvalidResult(f"{what} field {key!r} must be {kind}, got {value!r}")
    return float(value)


def _number(result: dict, key: str, what: str, required: bool = False, positive: bool = False) -> float | None:
    value = result.get(key)
    if value is None:
        if required:
            raise InvalidResult(f"{what} field {key!r} is missing")
        return None
    return _as_number(value, key, what, positive)


def _numbers(result: dict, key: str, what: str) -> list[float]:
    values = result.get(key) or []
    if not isinstance(values, list):
        raise InvalidResult(f"{what} field {key!r} must be a list of numbers, got {values!r}")
    return [_as_number(v, key, what) for v in values]


def _text(result: dict, key: str, what: str) -> str:
    value = result.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidResult(f"{what} field {key!r} must be a non-empty string, got {value!r}")
    return value


def _count(result: dict, key: str, what: str, default: int) -> int:
    value = result.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidResult(f"{what} field {key!r} must be a whole number >= 0, got {value!r}")
    return value


def measurement_row(m: Measurement) -> tuple[dict, list[tuple[int, float]]]:
    """-> (measurements row without ids and time, (trial index, latency) for the trials table);
    GFLOP/s and the speed-up over PyTorch derived where the measurement leaves them out."""
    derived_gflops = m.flops / m.latency_ms / 1e6 if m.flops is not None else None
    derived_speedup = m.torch_latency_ms / m.latency_ms if m.torch_latency_ms is not None else None
    row = {
        "bindings": dict(m.bindings),
        "latency_ms": m.latency_ms,
        "latency_std_ms": m.latency_std_ms,
        "flops": m.flops,
        "params": m.params,
        "gflops": m.gflops if m.gflops is not None else derived_gflops,
        "tuned": m.tuned,
        "trial_count": m.trial_count if m.trial_count is not None else len(m.trials),
        "torch_latency_ms": m.torch_latency_ms,
        "speedup": m.speedup if m.speedup is not None else derived_speedup,
        "max_abs_error": m.max_abs_error,
        "algorithm": m.algorithm,
        "layout": m.layout,
        "schedule_source": m.schedule_source,
        "timing_note": m.timing_note,
    }
    return row, list(m.trials)


def score_row(result: dict) -> dict:
    """-> scores row without ids and time."""
    what = "score"
    _check_keys(result, SCORE_FIELDS, what)
    return {
        "dataset": _text(result, "dataset", what),
        "backbone": _text(result, "backbone", what),
        "epochs": _count(result, "epochs", what, 0),
        "accuracy": _number(result, "accuracy", what),
        "accuracy_per_epoch": _numbers(result, "accuracy_per_epoch", what),
        "fisher_potential": _number(result, "fisher_potential", what),
        **_e2e(result, what),
    }


def _e2e(result: dict, what: str) -> dict:
    latency = _number(result, "e2e_latency_ms", what, positive="e2e_latency_ms" in result)
    baseline = _number(result, "e2e_baseline_ms", what, positive="e2e_baseline_ms" in result)
    speedup = _number(result, "e2e_speedup", what)
    if speedup is None and latency and baseline:
        speedup = baseline / latency
    tuned = result.get("e2e_tuned")
    if tuned is not None and not isinstance(tuned, bool):
        raise InvalidResult(f"{what} field 'e2e_tuned' must be true or false, got {tuned!r}")
    deploy = result.get("deploy")
    if deploy is not None and not isinstance(deploy, str):
        raise InvalidResult(f"{what} field 'deploy' must be text, got {deploy!r}")
    return {
        "e2e_latency_ms": latency,
        "e2e_baseline_ms": baseline,
        "e2e_speedup": speedup,
        "e2e_tuned": None if tuned is None else int(tuned),
        "deploy": deploy,
        "e2e_torch_ms": _number(result, "e2e_torch_ms", what, positive="e2e_torch_ms" in result),
        "e2e_torch_baseline_ms": _number(
            result, "e2e_torch_baseline_ms", what, positive="e2e_torch_baseline_ms" in result
        ),
    }


def operator_cost(doc: dict) -> dict:
    """FLOPs, MACs and parameters of an operator document at its own bindings
    (empty when it is not fully bound or not valid there)."""
    summary = summarize(graph_from_document(doc))
    if summary.numeric_cost is None or not summary.ok:
        return {}
    return {k: float(summary.numeric_cost[k]) for k in ("flops", "macs", "params")}
