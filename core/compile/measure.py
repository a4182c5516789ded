"""Measuring (and tuning) an operator: a short function over the parts of core.compile.

The workload (core.compile.workload) gives the torch module's output on a seeded input and
weights; the algorithm's kernel (core.compile.kernels) gives the variants to time, untuned
or after tuning; each is built for the place it runs (core.compile.place), its output checked
against the reference before any timing counts, then all of them timed in interleaved rounds
with PyTorch's module where it runs on this machine (core.compile.rounds), every side allowed
the threads that are free and run on its faster count of them (core.compile.target); the
fastest is kept, its speedup the median of the per-round ratios with its 95% interval. The
result is one Measurement (core.store.measurement), as for transfer-tuning
(core.compile.transfer_operator). The untuned kernel is built and checked first, before any
tuning: a kernel that computes wrong numbers fails in seconds, and its build's seconds are what
the job's progress estimates the builds after tuning from (core.compile.phases: progress is the
share of the expected running time spent). Imports TVM: worker processes only."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tvm

from ..store.measurement import Measurement
from .errors import CompileError
from .kernels.protocol import Kernel, Progress, Variant
from .phases import CHECK_BUILDS, Expected, rounds_s
from .place import Loaded, Place
from .rounds import Rounds, Timer, free_cores, interleave, thread_counts
from .settings import Settings
from .target import at_threads, core_count, fastest_threads, timing_threads
from .timing import Timing, check_close, kernel_timer, timing_note, torch_timer
from .tune import TRIALS_PER_BATCH, Tuning
from .workload import Workload


def measure_operator(
    workload: Workload,
    kernel: Kernel,
    place: Place,
    settings: Settings,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
    started: float | None = None,
) -> Measurement:
    """The algorithm's kernel, checked and timed beside PyTorch; with settings.tune_trials > 0
    tuned first (its earlier trials count), a tuned schedule kept only when it times faster
    than the untuned kernel. Progress is the share of the expected running time spent since
    `started` (time.time(); default now: core.compile.phases)."""
    return measure_kernel(workload, kernel, place, settings, progress, check_cancelled, started)[0]


def measure_kernel(
    workload: Workload,
    kernel: Kernel,
    place: Place,
    settings: Settings,
    progress: Progress,
    check_cancelled: Callable[[], None],
    started: float | None = None,
) -> tuple[Measurement, Variant]:
    """measure_operator's measurement and the variant it kept."""
    check_cancelled()
    expected = Expected(settings, progress, started, choices(place))
    expected.report(None, "building the untuned kernel")
    untuned = _check(workload, place, kernel.untuned(), expected)
    check_cancelled()
    if not settings.tune_trials:
        return measure_variants(workload, place, settings, [untuned], expected, check_cancelled)
    sides = 2 + place.times_torch  # tuned, untuned and PyTorch, at most
    search = expected.tuning(
        TRIALS_PER_BATCH / settings.tune_trials, lambda: expected.after_search(CHECK_BUILDS + 1, sides)
    )
    expected.report(None, f"tuning with up to {settings.tune_trials} trials")
    tuned = kernel.tune(search, check_cancelled)
    check_cancelled()
    variants = [untuned if not v.tuned else v for v in tuned.variants]  # the untuned kernel is built already
    return measure_variants(workload, place, settings, variants, expected, check_cancelled, tuned.tuning)


def alternating_medians(
    workload: Workload, place: Place, settings: Settings, variants: Mapping[str, Variant]
) -> dict[str, float]:
    """Median ms of each variant timed in interleaved rounds (core.compile.rounds: every variant
    once per round, in turn), so that the machine's load changing while one of them is timed
    does not decide between them."""
    loaded = {
        name: place.load(_build(v.module, place.target, workload.name), v.arguments) for name, v in variants.items()
    }
    rounds, _ = _interleaved(place, settings, {n: kernel_timer(k.module, k.device, k.args) for n, k in loaded.items()})
    return {name: statistics.median(runs) for name, runs in rounds.runs_ms.items()}


@dataclass(frozen=True)
class _Checked:
    variant: Variant
    kernel: Loaded
    error: float  # largest difference from the reference output


TORCH = "PyTorch"  # the reference's name among the rounds' sides


def measure_variants(
    workload: Workload,
    place: Place,
    settings: Settings,
    variants: Sequence[Variant | _Checked],
    expected: Expected,
    check_cancelled: Callable[[], None],
    tuning: Tuning | None = None,
    transfer: dict | None = None,
) -> tuple[Measurement, Variant]:
    """Build and check each variant where it runs (those not built yet), then time them all in
    interleaved rounds with PyTorch's module (where it runs here) and keep the fastest.
    `tuning` and `transfer` say how the variants were found. The measurement, and the variant
    kept."""
    sides = len(variants) + place.times_torch
    checked = []
    for step, variant in enumerate(variants):
        if isinstance(variant, Variant):
            builds = sum(isinstance(v, Variant) for v in variants[step:])
            label = "tuned" if variant.tuned else "untuned"
            expected.report(expected.after_search(builds, sides), f"building the {label} kernel")
            variant = _check(workload, place, variant, expected)
            check_cancelled()
        checked.append(variant)
    expected.report(rounds_s(settings, sides, expected.counts), "timing the kernel and PyTorch in interleaved rounds")
    timers = {f"{i}": kernel_timer(c.kernel.module, c.kernel.device, c.kernel.args) for i, c in enumerate(checked)}
    if place.times_torch:
        timers[TORCH] = torch_timer(workload.module, workload.x)
    rounds, threads = _interleaved(place, settings, timers, reference=TORCH if place.times_torch else None)
    kept = checked[int(rounds.fastest())]
    expected.done()
    measurement = _measurement(workload, place, kept, checked, rounds, threads, tuning, transfer)
    return measurement, kept.variant


def _check(workload: Workload, place: Place, variant: Variant, expected: Expected) -> _Checked:
    """`variant` built where it runs and checked against the reference; the seconds it took tell `expected`."""
    begun = time.monotonic()
    kernel = place.load(_build(variant.module, place.target, workload.name), variant.arguments)
    error = check_close(kernel.run(), workload.reference, workload.name)  # the run is also the warm-up
    expected.built(time.monotonic() - begun)
    return _Checked(variant, kernel, error)


def _allowed(place: Place) -> int:
    """The threads the sides may use at most: the place's cores (this machine's by default)."""
    return place.threads or core_count()


def choices(place: Place) -> int:
    """How many thread counts each side is tried on before the rounds (an upper bound: on a busy
    machine fewer threads are free, and fewer counts tried)."""
    return len(thread_counts(_allowed(place))) if place.times_torch else 1


def _interleaved(
    place: Place, settings: Settings, timers: Mapping[str, Timer], reference: str | None = None
) -> tuple[Rounds, dict[str, int | None]]:
    """The sides timed in interleaved rounds, and the threads each ran on: on this machine each
    side on its faster count of those free (core.compile.target.fastest_threads), elsewhere on
    the device's own (its target's cores)."""
    if not place.times_torch:
        rounds = interleave(timers, settings.min_repeat_ms, reference=reference, min_rounds=settings.repeat)
        return rounds, dict.fromkeys(timers, place.threads)
    with timing_threads(free_cores(_allowed(place))) as free:
        counts = {name: fastest_threads(timer, free, settings.min_repeat_ms) for name, timer in timers.items()}
        at_counts = {name: at_threads(timer, counts[name]) for name, timer in timers.items()}
        rounds = interleave(at_counts, settings.min_repeat_ms, reference=reference, min_rounds=settings.repeat)
    return rounds, dict(counts)


def _build(mod: tvm.IRModule, target: tvm.target.Target, name: str):
    """The kernel compiled for `target`; a CompileError naming the operator if TVM cannot."""
    try:
        return tvm.compile(mod, target=target)
    except (RuntimeError, ValueError) as e:
        raise CompileError(f"{name}: TVM could not build the kernel: {e}") from None


def _measurement(
    workload: Workload,
    place: Place,
    kept: _Checked,
    checked: list[_Checked],
    rounds: Rounds,
    threads: Mapping[str, int | None],
    tuning: Tuning | None,
    transfer: dict | None,
) -> Measurement:
    variant, name = kept.variant, str(checked.index(kept))
    runs = rounds.runs_ms[name]
    latency = rounds.latency_ms(name)
    flops, params = workload.cost()
    behind = Timing.of([r / 1e3 for r in runs]).behind(tuning.chosen_ms) if tuning is not None and variant.tuned else ""
    speedup = rounds.speedup(name)
    torch: dict[str, Any] = {}
    if speedup is not None:
        torch_runs = rounds.runs_ms[TORCH]
        torch = {
            "torch_latency_ms": rounds.latency_ms(TORCH),
            "torch_latency_std_ms": statistics.stdev(torch_runs),
            "torch_gflops": flops / rounds.latency_ms(TORCH) / 1e6,
            "torch_threads": threads[TORCH],
            "speedup": speedup.median,
            "speedup_low": speedup.low,
            "speedup_high": speedup.high,
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
    doubts = ((speedup or rounds.decided(name)).doubt("the speedup over PyTorch" if speedup else "the latency"), behind)
    return Measurement(
        latency_ms=latency,
        latency_std_ms=statistics.stdev(runs),
        latency_runs_ms=runs,
        gflops=flops / latency / 1e6,
        max_abs_error=kept.error,
        timing_note=timing_note(*doubts),
        operator=workload.name,
        bindings=workload.bindings,
        batch=workload.batch,
        flops=flops,
        params=params,
        target=str(place.target),
        threads=threads[name],
        load=os.getloadavg()[0],
        algorithm=variant.algorithm,
        layout=variant.layout,
        schedule_source=_source(kept, checked, rounds, tuning),
        tuned=variant.tuned,
        algorithm_details=variant.details,
        transfer=transfer,
        **torch,
        **tuned,
    )


def _source(kept: _Checked, checked: list[_Checked], rounds: Rounds, tuning: Tuning | None) -> str:
    """Where the kept schedule came from; says so when a tuned one lost to the untuned kernel
    and when faster tuned records were skipped for computing wrong numbers."""
    slower = [str(i) for i, c in enumerate(checked) if c.variant.tuned and c is not kept]
    source = kept.variant.source
    if not kept.variant.tuned and slower:
        source = f"untuned (the tuned schedule ran slower: {rounds.latency_ms(slower[0]):.4g} ms)"
    if tuning is not None and tuning.wrong:
        source += f"; {tuning.wrong} faster tuned record(s) computed wrong numbers and were skipped"
    return source
