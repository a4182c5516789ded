"""Measuring (and tuning) an operator: a short function over the parts of core.compile.

The workload (core.compile.workload) gives the torch module's output on a seeded input and
weights; the algorithm's kernel (core.compile.kernels) gives the variants to time, untuned
or after tuning; each is built for the place it runs (core.compile.place), its output checked
against the reference before any timing counts, then timed (core.compile.timing); the fastest
is kept and PyTorch's module is timed beside it where it runs on this machine, with the same
thread count. The result is one Measurement (core.store.measurement), as for transfer-tuning
(core.compile.transfer_operator). Imports TVM: worker processes only."""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tvm

from ..store.measurement import Measurement
from .errors import CompileError
from .kernels.protocol import Kernel, Progress, Variant
from .place import Place
from .settings import Settings
from .timing import Timing, check_close, time_kernel, time_torch, timing_note
from .tune import Tuning
from .workload import Workload


def measure_operator(
    workload: Workload,
    kernel: Kernel,
    place: Place,
    settings: Settings,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
) -> Measurement:
    """The algorithm's kernel, checked and timed beside PyTorch; with settings.tune_trials > 0
    tuned first (its earlier trials count), a tuned schedule kept only when it times faster
    than the untuned kernel."""
    return measure_kernel(workload, kernel, place, settings, progress, check_cancelled)[0]


def measure_kernel(
    workload: Workload,
    kernel: Kernel,
    place: Place,
    settings: Settings,
    progress: Progress,
    check_cancelled: Callable[[], None],
) -> tuple[Measurement, Variant]:
    """measure_operator's measurement and the variant it kept."""
    check_cancelled()
    if not settings.tune_trials:
        return measure_variants(workload, place, settings, [kernel.untuned()], progress, check_cancelled)
    tuned = kernel.tune(progress, check_cancelled)
    check_cancelled()
    return measure_variants(workload, place, settings, tuned.variants, progress, check_cancelled, tuned.tuning)


def alternating_medians(
    workload: Workload, place: Place, settings: Settings, variants: Mapping[str, Variant]
) -> dict[str, float]:
    """Median ms of each variant timed in settings.repeat alternating rounds (every variant
    once per round, in turn: as many runs as one measurement), so that the machine's load
    changing while one of them is timed does not decide between them."""
    loaded = {
        name: place.load(_build(v.module, place.target, workload.name), v.arguments) for name, v in variants.items()
    }
    runs: dict[str, list[float]] = {name: [] for name in loaded}
    for kernel in loaded.values():
        kernel.run()  # warm-up
    for _ in range(settings.repeat):
        for name, kernel in loaded.items():
            timing = time_kernel(kernel.module, kernel.device, kernel.args, 1, 1, settings.min_repeat_ms)
            runs[name].append(timing.median_ms)
    return {name: statistics.median(r) for name, r in runs.items()}


@dataclass(frozen=True)
class _Timed:
    variant: Variant
    timing: Timing
    error: float  # largest difference from the reference output


def measure_variants(
    workload: Workload,
    place: Place,
    settings: Settings,
    variants: Sequence[Variant],
    progress: Progress,
    check_cancelled: Callable[[], None],
    tuning: Tuning | None = None,
    transfer: dict | None = None,
) -> tuple[Measurement, Variant]:
    """Build, check and time each variant where it runs and keep the fastest; time PyTorch
    where it runs here. `tuning` and `transfer` say how the variants were found. The
    measurement, and the variant kept."""
    timed = []
    for step, variant in enumerate(variants):
        label = "tuned" if variant.tuned else "untuned"
        progress(0.82 + 0.06 * step, f"building the {label} kernel")
        kernel = place.load(_build(variant.module, place.target, workload.name), variant.arguments)
        error = check_close(kernel.run(), workload.reference, workload.name)  # the run is also the warm-up
        check_cancelled()
        progress(0.85 + 0.06 * step, f"timing the {label} kernel")
        timing = time_kernel(
            kernel.module,
            kernel.device,
            kernel.args,
            1,
            settings.repeat,
            settings.min_repeat_ms,
            (place.threads or os.cpu_count() or 1) if place.times_torch else None,  # on this machine: watched
        )
        timed.append(_Timed(variant, timing, error))
    kept = min(timed, key=lambda t: t.timing.median_ms)
    progress(0.95, "timing torch")
    torch_time = (
        time_torch(workload.module, workload.x, settings.repeat, settings.min_repeat_ms) if place.times_torch else None
    )
    progress(1.0, "done")
    return _measurement(workload, place, kept, timed, torch_time, tuning, transfer), kept.variant


def _build(mod: tvm.IRModule, target: tvm.target.Target, name: str):
    """The kernel compiled for `target`; a CompileError naming the operator if TVM cannot."""
    try:
        return tvm.compile(mod, target=target)
    except (RuntimeError, ValueError) as e:
        raise CompileError(f"{name}: TVM could not build the kernel: {e}") from None


def _measurement(
    workload: Workload,
    place: Place,
    kept: _Timed,
    timed: list[_Timed],
    torch_time: Timing | None,
    tuning: Tuning | None,
    transfer: dict | None,
) -> Measurement:
    time, variant = kept.timing, kept.variant
    flops, params = workload.cost()
    behind = time.behind(tuning.chosen_ms) if tuning is not None and variant.tuned else ""
    torch: dict[str, Any] = {}
    if torch_time is not None:
        torch = {
            "torch_latency_ms": torch_time.median_ms,
            "torch_latency_std_ms": torch_time.std_ms,
            "torch_gflops": flops / torch_time.median_ms / 1e6,
            "speedup": torch_time.median_ms / time.median_ms,
        }
    tuned: dict[str, Any] = {"trial_count": 0}
    if tuning is not None:
        tuned = {
            "trials": tuple((i, ms) for i, ms in tuning.trials if ms is not None),
            "trial_count": len(tuning.trials),
            "new_trials": tuning.new_trials,
            "best_trial_ms": tuning.best_ms,
            "cost_model": tuning.cost_model,
            "tuning_dir": str(tuning.work_dir),
        }
    return Measurement(
        latency_ms=time.median_ms,
        latency_std_ms=time.std_ms,
        latency_runs_ms=time.runs_ms,
        gflops=flops / time.median_ms / 1e6,
        max_abs_error=kept.error,
        timing_note=timing_note(
            time.doubt("TVM's kernel"), torch_time.doubt("PyTorch") if torch_time is not None else "", behind
        ),
        operator=workload.name,
        bindings=workload.bindings,
        batch=workload.batch,
        flops=flops,
        params=params,
        target=str(place.target),
        threads=place.threads,
        algorithm=variant.algorithm,
        layout=variant.layout,
        schedule_source=_source(kept, timed, tuning),
        tuned=variant.tuned,
        algorithm_details=variant.details,
        transfer=transfer,
        **torch,
        **tuned,
    )


def _source(kept: _Timed, timed: list[_Timed], tuning: Tuning | None) -> str:
    """Where the kept schedule came from; says so when a tuned one lost to the untuned kernel
    and when faster tuned records were skipped for computing wrong numbers."""
    slower = [t for t in timed if t.variant.tuned and t is not kept]
    source = kept.variant.source
    if not kept.variant.tuned and slower:
        source = f"untuned (the tuned schedule ran slower: {slower[0].timing.median_ms:.4g} ms)"
    if tuning is not None and tuning.wrong:
        source += f"; {tuning.wrong} faster tuned record(s) computed wrong numbers and were skipped"
    return source
