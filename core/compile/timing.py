"""Timing kernels and torch modules, and the correctness check that comes first.

A measurement or a whole network times its sides in interleaved rounds (core.compile.rounds,
through `kernel_timer` and `torch_timer` here); tuning trials, tile-grid points, reused
schedules and benchmarks use `time_kernel` / `time_torch`: warm-up, then `repeat` timed
repeats of at least `min_repeat_ms` each (TVM through its `time_evaluator`, torch by doubling
the calls per repeat until a repeat lasts that long), reported as median and standard
deviation. Imports torch: worker processes only."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import torch

from .errors import NumericalMismatch
from .rounds import Timer, calibrate

SPREAD_LIMIT = 0.2  # runs whose standard deviation exceeds this share of the median time nothing
#: how tuning trials and reused-schedule candidates are timed (as MetaSchedule's runner does)
TRIAL = {"number": 3, "repeat": 1, "min_repeat_ms": 50}


@dataclass(frozen=True)
class Timing:
    median_ms: float
    std_ms: float
    runs_ms: tuple[float, ...]  # mean time of one call, per repeat

    @classmethod
    def of(cls, runs_s: Iterable[float]) -> Timing:
        runs = tuple(float(r) * 1e3 for r in runs_s)
        return cls(statistics.median(runs), statistics.stdev(runs) if len(runs) > 1 else 0.0, runs)

    def behind(self, best_ms: float | None) -> str:
        """Why a tuned kernel's timing is in doubt when it ran well behind its own best trial
        (other load while it was timed); "" otherwise."""
        if best_ms and self.median_ms > (1 + SPREAD_LIMIT) * best_ms:
            return f"the tuned kernel timed {self.median_ms / best_ms - 1:.0%} slower than its best trial ({best_ms:.4g} ms)"
        return ""


def timing_note(*doubts: str) -> str | None:
    """One line for a result: 'in doubt: ...' when any timing is in doubt (each reason with its
    figures, e.g. the interval), else None."""
    found = [d for d in doubts if d]
    return f"in doubt: {'; '.join(found)}" if found else None


def check_close(got: np.ndarray, reference: np.ndarray, name: str) -> float:
    """Largest absolute difference from torch's output; NumericalMismatch beyond float32 noise
    (1e-3 of the output's magnitude)."""
    error = float(np.abs(got - reference).max()) if got.size else 0.0
    tolerance = 1e-3 * max(1.0, float(np.abs(reference).max()) if reference.size else 0.0)
    if not error <= tolerance:  # also catches NaN
        raise NumericalMismatch(
            f"{name}: TVM's output differs from the torch module's by up to {error:.3g} (tolerance {tolerance:.3g})",
            error,
        )
    return error


def time_kernel(kernel, dev, args: list, number: int, repeat: int, min_repeat_ms: float) -> Timing:
    """A built kernel's "main" timed on `dev` (this CPU or an RPC server's) by TVM's evaluator."""
    evaluator = kernel.time_evaluator("main", dev, number=number, repeat=repeat, min_repeat_ms=int(min_repeat_ms))
    return Timing.of(evaluator(*args).results)


def kernel_timer(kernel, dev, args: list) -> Timer:
    """A round's timer (core.compile.rounds) for a built kernel's "main" on `dev`, by TVM's evaluator."""
    evaluators: dict[int, Callable] = {}

    def timer(number: int) -> float:
        if number not in evaluators:
            evaluators[number] = kernel.time_evaluator("main", dev, number=number, repeat=1)
        return evaluators[number](*args).mean * number

    return timer


def torch_timer(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> Timer:
    """A round's timer for a torch module on `x` (inference only)."""

    def timer(number: int) -> float:
        with torch.inference_mode():
            start = time.perf_counter()
            for _ in range(number):
                fn(x)
            return time.perf_counter() - start

    return timer


def time_torch(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, repeat: int, min_repeat_ms: float
) -> Timing:
    """Like time_evaluator: calls per repeat doubled until a repeat lasts min_repeat_ms."""
    run = torch_timer(fn, x)
    number = calibrate(run, min_repeat_ms)  # doubles as the warm-up
    return Timing.of([run(number) / number for _ in range(repeat)])
