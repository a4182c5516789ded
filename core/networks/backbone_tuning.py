"""A network's kernels, tuned from scratch or by transfer-tuning: `tessera tune --backbone`
and the transfer benchmark.

The kernels are the TIR tasks TVM relax compiles a backbone (core.data.backbones)
into: torch.export, relax's "zero" pipeline (legalised and fused), MetaSchedule's
task extraction; each comes with how often the network runs it. Every kernel is
timed the same way (core.compile.timing.TRIAL, random inputs, the untuned
build's output as the reference), so the network's kernel time is the sum of
weight x latency, untuned, transferred or tuned. Imports TVM and torch: worker
processes only."""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
import tvm
from tvm import s_tir
from tvm.s_tir import meta_schedule as ms

from ..compile.errors import CompileError
from ..compile.handlers import quiet_stdout
from ..compile.place import ThisMachine
from ..compile.target import core_count, local_target, use_threads
from ..compile.transfer import Bench, NotApplicable, transfer_kernel, untuned_latency
from ..compile.transfer_records import choose_source, measured_trials, schedules_of
from ..compile.transfer_sources import Source, payload_sources
from ..compile.tune import tune_kernels, tuning_root
from ..data.backbones import build_backbone
from ..data.specs import BackboneSpec
from .relax_import import to_relax
from .schedules import NetworkKernel, fused, network_kernels

Progress = Callable[[float, str], None]
MODES = ("transfer", "scratch")


def backbone_kernels(spec: BackboneSpec, target: tvm.target.Target, only: Sequence[str] = ()) -> list[NetworkKernel]:
    """The backbone's kernels at batch 1 (those whose name contains one of `only`, if given)."""
    model = build_backbone(spec, num_classes=10)
    kernels = network_kernels(
        fused(to_relax(model, torch.randn(1, 3, spec.resolution, spec.resolution), spec.label)), target, only
    )
    if not kernels:
        raise CompileError(f"{spec.label} has no kernel whose name contains {' or '.join(only)}")
    return kernels


def network_time(kernels: Sequence[NetworkKernel], latency_ms: dict[str, float]) -> float:
    """sum of weight x latency over the kernels (ms)."""
    return sum(k.weight * latency_ms[k.name] for k in kernels)


Baseline = tuple[dict[str, Bench], dict[str, float]]


def untuned_times(
    kernels: Sequence[NetworkKernel], target: tvm.target.Target, progress: Progress = lambda f, m: None
) -> Baseline:
    """A bench per kernel and each kernel's untuned latency (ms): the baseline of both methods."""
    benches, untuned = {}, {}
    for i, k in enumerate(kernels):
        progress(0.3 * i / len(kernels), f"timing the untuned kernel {k.name}")
        benches[k.name] = Bench.of_kernel(k.mod, ThisMachine(target), k.name)
        untuned[k.name] = untuned_latency(k.mod, benches[k.name])
    return benches, untuned


def transfer_network(
    kernels: Sequence[NetworkKernel],
    sources: Sequence[Source],
    target: tvm.target.Target,
    top_k: int = 1,
    progress: Progress = lambda f, m: None,
    baseline: Baseline | None = None,
) -> dict:
    """Transfer-tuning for every kernel from the best-ranked source (P_c from the untuned times;
    `baseline`: untuned_times() if already known)."""
    benches, untuned = baseline or untuned_times(kernels, target, progress)
    per_class: dict[str, float] = defaultdict(float)
    for k in kernels:
        per_class[k.kclass.key] += k.weight * untuned[k.name]
    start = time.perf_counter()
    chosen, ranking = choose_source(sources, per_class)
    search_s = time.perf_counter() - start
    rows = []
    for i, k in enumerate(kernels):
        progress(0.3 + 0.7 * i / len(kernels), f"reusing schedules on {k.name}")
        done = transfer_kernel(
            k.mod, k.kclass, benches[k.name], schedules_of(k.kclass.key, chosen, top_k), untuned_ms=untuned[k.name]
        )
        search_s += done.search_s
        rows.append({"kernel": k.name, "weight": k.weight, **done.summary()})
    reasons: Counter = Counter()
    for row in rows:
        reasons.update(row["skip_reasons"])
    transferred = {row["kernel"]: row["transfer_ms"] for row in rows}
    return {
        "mode": "transfer",
        **_totals(kernels, untuned, transferred),
        "search_s": search_s,
        "found": sum(r["found"] for r in rows),
        "applied": sum(r["applied"] for r in rows),
        "skipped": sum(r["skipped"] for r in rows),
        "skip_reasons": dict(reasons),
        "sources_ranked": ranking,
        "kernels": rows,
    }


def tune_network(
    kernels: Sequence[NetworkKernel],
    target: tvm.target.Target,
    work_dir: Path,
    trials: int,
    *,
    cost_model: str = "xgb",
    seed: int = 0,
    progress: Progress = lambda f, m: None,
    baseline: Baseline | None = None,
) -> dict:
    """MetaSchedule from scratch on the kernels with one `trials` budget (trials already in
    `work_dir` count). "curve": the network's kernel time after each trial in measured order,
    as if tuning had stopped there (tuning_curve); "tuned_ms" is its last point."""
    benches, untuned = baseline or untuned_times(kernels, target, progress)
    start = time.perf_counter()
    new = tune_kernels(
        [(k.name, k.mod, k.weight) for k in kernels],
        target,
        work_dir,
        trials,
        cost_model=cost_model,
        seed=seed,
        on_progress=lambda done, total, what: progress(0.3 + 0.6 * done / total, f"tuning: {what}"),
    )
    search_s = time.perf_counter() - start
    progress(0.9, "timing the best schedules")
    curve, tuned = tuning_curve(work_dir, kernels, (benches, untuned))
    rows = [
        {
            "kernel": k.name,
            "weight": k.weight,
            "kernel_class": k.kclass.key,
            "untuned_ms": untuned[k.name],
            "tuned_ms": tuned[k.name],
            "speedup_vs_untuned": untuned[k.name] / tuned[k.name],
        }
        for k in kernels
    ]
    return {
        "mode": "scratch",
        **_totals(kernels, untuned, tuned),
        "search_s": search_s,
        "new_trials": new,
        "trials": len(curve),
        "curve": curve,
        "tuning_dir": str(work_dir),
        "kernels": rows,
    }


def tuning_curve(
    work_dir: Path, kernels: Sequence[NetworkKernel], baseline: Baseline
) -> tuple[list[float], dict[str, float]]:
    """The network's kernel time (ms) after each trial of `work_dir` in measured order, as if
    tuning had stopped there: each kernel with the schedule MetaSchedule would pick by then (its
    fastest recorded trial), built and timed like the untuned kernel, or untuned where that is
    faster or no trial succeeded. Also each kernel's latency at the end."""
    benches, untuned = baseline
    keys, trials = measured_trials(work_dir)
    by_key = {ms.database.Workload(k.mod).as_json()[0]: k for k in kernels}
    recorded: dict[str, float] = {}
    current = dict(untuned)
    curve: list[float] = []
    for index, latency, record in trials:
        k = by_key.get(keys[index])
        if k is not None and latency is not None and latency < recorded.get(k.name, math.inf):
            recorded[k.name] = latency
            sch = s_tir.Schedule(k.mod)
            ms.database.TuningRecord.from_json(record, ms.database.Workload(k.mod)).trace.apply_to_schedule(
                sch, remove_postproc=False
            )
            try:
                current[k.name] = min(untuned[k.name], benches[k.name].screen(sch.mod))
            except NotApplicable as e:
                raise CompileError(f"{k.name}: trial {len(curve)} in {work_dir} {e}") from None
        curve.append(network_time(kernels, current))
    return curve, current


def network_call(payload: dict, progress: Progress | None = None) -> dict:
    """For `tessera tune --backbone` through call_in_subprocess. payload: {"backbone": name,
    "width", "resolution", "mode": "transfer" | "scratch", "trials" (scratch), "cost_model",
    "sources" (transfer; default the tuning root), "top_k", "only" (kernel name parts),
    "tuning_root"}. Tuning from scratch keeps its database in
    <tuning root>/local/backbone-<name>-w<width>-r<resolution>, a source for later transfers."""
    quiet_stdout()
    progress = progress or (lambda f, m: None)
    mode = payload.get("mode")
    if mode not in MODES:
        raise CompileError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    spec = BackboneSpec(str(payload.get("backbone")), payload.get("width", 16), payload.get("resolution", 16))
    use_threads(core_count())
    target = local_target(core_count())
    root = Path(payload["tuning_root"]).expanduser() if payload.get("tuning_root") else tuning_root()
    progress(0.0, f"extracting the kernels of {spec.label}")
    kernels = backbone_kernels(spec, target, payload.get("only") or ())
    if mode == "transfer":
        report = transfer_network(
            kernels, payload_sources(payload.get("sources"), root), target, payload.get("top_k", 1), progress
        )
    else:
        work_dir = root / "local" / f"backbone-{spec.name}-w{spec.width}-r{spec.resolution}"
        report = tune_network(
            kernels,
            target,
            work_dir,
            payload.get("trials", 0),
            cost_model=payload.get("cost_model", "xgb"),
            progress=progress,
        )
    progress(1.0, "done")
    return {"network": f"{spec.label} at {spec.resolution}x{spec.resolution}", **report}


def _totals(kernels: Sequence[NetworkKernel], untuned: dict[str, float], tuned: dict[str, float]) -> dict:
    before, after = network_time(kernels, untuned), network_time(kernels, tuned)
    return {"untuned_ms": before, "tuned_ms": after, "speedup_vs_untuned": before / after}
