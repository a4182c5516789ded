"""The rows the store keeps for a result: a measurement's and a score's, read from their
types (core.store.measurement, core.store.score, which check every field when they are made
or read, so a handler's mistake fails its job with a message naming the field)."""

from __future__ import annotations

from core.analysis.summary import summarize
from core.ir.graph import OperatorGraph

from .measurement import Measurement
from .schema import TEST_COLUMNS
from .score import Score


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
        "speedup_low": m.speedup_low,
        "speedup_high": m.speedup_high,
        "threads": m.threads,
        "torch_threads": m.torch_threads,
        "load": m.load,
        "max_abs_error": m.max_abs_error,
        "algorithm": m.algorithm,
        "layout": m.layout,
        "schedule_source": m.schedule_source,
        "timing_note": m.timing_note,
    }
    return row, list(m.trials)


def score_row(s: Score) -> dict:
    """-> scores row without ids and time; the end-to-end speed-up derived where the score
    leaves it out."""
    derived_speedup = (
        s.e2e_baseline_ms / s.e2e_latency_ms if s.e2e_latency_ms is not None and s.e2e_baseline_ms is not None else None
    )
    return {
        "dataset": s.dataset,
        "backbone": s.backbone,
        "epochs": s.epochs,
        "accuracy": s.accuracy,
        "accuracy_per_epoch": list(s.accuracy_per_epoch),
        "fisher_potential": s.fisher_potential,
        "e2e_latency_ms": s.e2e_latency_ms,
        "e2e_baseline_ms": s.e2e_baseline_ms,
        "e2e_speedup": s.e2e_speedup if s.e2e_speedup is not None else derived_speedup,
        "e2e_tuned": None if s.e2e_tuned is None else int(s.e2e_tuned),
        "deploy": s.deploy,
        "e2e_torch_ms": s.e2e_torch_ms,
        "e2e_torch_baseline_ms": s.e2e_torch_baseline_ms,
        **{name: getattr(s, name) for name in TEST_COLUMNS},
    }


def operator_cost(graph: OperatorGraph) -> dict:
    """FLOPs, MACs and parameters of an operator at its own bindings (empty when it is not
    fully bound or not valid there)."""
    summary = summarize(graph)
    if summary.numeric_cost is None or not summary.ok:
        return {}
    return {k: float(summary.numeric_cost[k]) for k in ("flops", "macs", "params")}
