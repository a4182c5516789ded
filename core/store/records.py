"""The result dicts the store records (a measurement, a score), checked field by field,
so a handler's mistake fails its job with a message naming the field."""

from __future__ import annotations

import math

from core.analysis.summary import summarize
from core.ir.serialize import graph_from_document

from .errors import InvalidResult

MEASUREMENT_FIELDS = {
    "latency_ms": "median latency, ms (required, > 0)",
    "latency_std_ms": "standard deviation of the latency, ms",
    "flops": "floating-point operations of one run at these bindings",
    "params": "parameter count at these bindings",
    "gflops": "achieved GFLOP/s (derived from flops and latency_ms when absent)",
    "tuned": "true if a tuned schedule was measured",
    "trials": "[trial index, latency ms] of every tuning trial that ran (kept in the trials table)",
    "trial_count": "number of tuning trials (defaults to len(trials))",
    "torch_latency_ms": "latency of the PyTorch reference, ms",
    "speedup": "torch_latency_ms / latency_ms (derived when absent)",
    "bindings": "variable -> size used, e.g. {'C_in': 64} (defaults to the job's bindings)",
    "algorithm": "how the operator was lowered: 'default' (TVM's lowering), 'gspc' (grouped spatial pack), ...",
    "layout": "data layout of the kernel, e.g. 'NCHW'",
    "schedule_source": "where the schedule came from: 'untuned', 'tuned', 'transfer:<source>', ...",
    "max_abs_error": "largest absolute difference of the kernel's output from PyTorch's (the correctness check)",
    "timing_note": "why the timing cannot be trusted ('unreliable: ...'), empty when it can",
}

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


def _trials(result: dict, what: str) -> list[tuple[int, float]]:
    pairs = result.get("trials") or []
    if not isinstance(pairs, list):
        raise InvalidResult(f"{what} field 'trials' must be a list of [trial index, latency ms] pairs, got {pairs!r}")
    trials = []
    for pair in pairs:
        if not (
            isinstance(pair, (list, tuple))
            and len(pair) == 2
            and isinstance(pair[0], int)
            and not isinstance(pair[0], bool)
            and pair[0] >= 0
        ):
            raise InvalidResult(f"{what} field 'trials' must hold [trial index, latency ms] pairs, got {pair!r}")
        trials.append((pair[0], _as_number(pair[1], "trials", what, positive=True)))
    return trials


def _text(result: dict, key: str, what: str) -> str:
    value = result.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidResult(f"{what} field {key!r} must be a non-empty string, got {value!r}")
    return value


def _optional_text(result: dict, key: str, what: str) -> str | None:
    return _text(result, key, what) if result.get(key) is not None else None


def _count(result: dict, key: str, what: str, default: int) -> int:
    value = result.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidResult(f"{what} field {key!r} must be a whole number >= 0, got {value!r}")
    return value


def measurement_row(result: dict) -> tuple[dict, list[tuple[int, float]]]:
    """-> (measurements row without ids and time, (trial index, latency) for the trials table)."""
    what = "measurement"
    _check_keys(result, MEASUREMENT_FIELDS, what)
    latency = _number(result, "latency_ms", what, required=True, positive=True)
    trials = _trials(result, what)
    flops = _number(result, "flops", what)
    gflops = _number(result, "gflops", what)
    torch_latency = _number(result, "torch_latency_ms", what, positive=True)
    speedup = _number(result, "speedup", what)
    tuned = result.get("tuned", False)
    if not isinstance(tuned, bool):
        raise InvalidResult(f"{what} field 'tuned' must be true or false, got {tuned!r}")
    bindings = result.get("bindings") or {}
    if not isinstance(bindings, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in bindings.items()
    ):
        raise InvalidResult(f"{what} field 'bindings' must map variable names to integers, got {bindings!r}")
    row = {
        "bindings": bindings,
        "latency_ms": latency,
        "latency_std_ms": _number(result, "latency_std_ms", what),
        "flops": flops,
        "params": _number(result, "params", what),
        "gflops": gflops if gflops is not None or flops is None else flops / latency / 1e6,
        "tuned": tuned,
        "trial_count": _count(result, "trial_count", what, len(trials)),
        "torch_latency_ms": torch_latency,
        "speedup": speedup if speedup is not None or torch_latency is None else torch_latency / latency,
        "max_abs_error": _number(result, "max_abs_error", what),
        **{key: _optional_text(result, key, what) for key in ("algorithm", "layout", "schedule_source", "timing_note")},
    }
    return row, trials


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
