"""Timing kernels and torch modules the same way, and the correctness check that comes first.

Both are timed alike: warm-up, then `repeat` timed repeats of at least `min_repeat_ms` each
(TVM through its `time_evaluator`, torch by doubling the calls per repeat until a repeat
lasts that long), reported as median and standard deviation. A timing says when it cannot
be trusted (runs that spread widely on a busy machine, a call too short to time, or, on
this machine, a process that got too little of its cores' time while it was timed: a busy
machine slows a multi-threaded torch call 400x without any spread). Imports torch: worker
processes only."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np
import torch

from .errors import NumericalMismatch

SPREAD_LIMIT = 0.2  # runs whose standard deviation exceeds this share of the median time nothing
SHORTEST_MS = 0.005  # below 5 us per call, call overhead and timer resolution dominate
#: a timing on this machine during which the process got less than this share of its threads'
#: CPU time was disturbed (quiet: 0.9-1.0; at load 6 on 2 cores: 0.49 on 1 thread, 0.25 on 2)
BUSY_SHARE = 0.7
#: how tuning trials and reused-schedule candidates are timed (as MetaSchedule's runner does)
TRIAL = {"number": 3, "repeat": 1, "min_repeat_ms": 50}


@dataclass(frozen=True)
class Timing:
    median_ms: float
    std_ms: float
    runs_ms: tuple[float, ...]  # mean time of one call, per repeat
    #: on this machine: CPU time the process got over wall time x `threads` while timed (None elsewhere)
    cpu_share: float | None = None
    threads: int = 1

    @classmethod
    def of(cls, runs_s: Iterable[float]) -> Timing:
        runs = tuple(float(r) * 1e3 for r in runs_s)
        return cls(statistics.median(runs), statistics.stdev(runs) if len(runs) > 1 else 0.0, runs)

    def doubt(self, what: str) -> str:
        """Why this timing cannot be trusted ("" when it can): a call too short to time, or a
        busy machine (runs that spread widely, or too little CPU time while it was timed)."""
        if self.median_ms < SHORTEST_MS:
            return f"{what} is too short to time reliably ({1e3 * self.median_ms:.1f} us per call)"
        if self.cpu_share is not None and self.cpu_share < BUSY_SHARE:
            return (
                f"{what} got {self.cpu_share:.0%} of its {self.threads} thread(s)' CPU time while timed "
                "(the machine was busy)"
            )
        if self.std_ms > SPREAD_LIMIT * self.median_ms:
            return f"{what}'s runs spread by {self.std_ms / self.median_ms:.0%} of their median"
        return ""

    def behind(self, best_ms: float | None) -> str:
        """Why a tuned kernel's timing is in doubt when it ran well behind its own best trial
        (other load while it was timed); "" otherwise."""
        if best_ms and self.median_ms > (1 + SPREAD_LIMIT) * best_ms:
            return f"the tuned kernel timed {self.median_ms / best_ms - 1:.0%} slower than its best trial ({best_ms:.4g} ms)"
        return ""


def timing_note(*doubts: str) -> str | None:
    """One line for a result: 'unreliable: ...' when any timing is in doubt, else None."""
    found = [d for d in doubts if d]
    return f"unreliable: {'; '.join(found)}" if found else None


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


def time_kernel(
    kernel, dev, args: list, number: int, repeat: int, min_repeat_ms: float, threads: int | None = None
) -> Timing:
    """A built kernel's "main" timed on `dev` (this CPU or an RPC server's) by TVM's evaluator;
    `threads`: the kernel runs on this machine with that many, and its CPU share is kept."""
    evaluator = kernel.time_evaluator("main", dev, number=number, repeat=repeat, min_repeat_ms=int(min_repeat_ms))
    if threads is None:
        return Timing.of(evaluator(*args).results)
    return _watched(lambda: Timing.of(evaluator(*args).results), threads)


def time_torch(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, repeat: int, min_repeat_ms: float
) -> Timing:
    """Like time_evaluator: calls per repeat doubled until a repeat lasts min_repeat_ms."""

    def run(number: int) -> float:
        start = time.perf_counter()
        for _ in range(number):
            fn(x)
        return time.perf_counter() - start

    def timed() -> Timing:
        number = 1
        while run(number) * 1e3 < min_repeat_ms:  # doubles as the warm-up
            number *= 2
        return Timing.of([run(number) / number for _ in range(repeat)])

    with torch.inference_mode():
        return _watched(timed, torch.get_num_threads())


def _watched(timed: Callable[[], Timing], threads: int) -> Timing:
    """`timed()` with the share of its `threads`' CPU time this process got meanwhile."""
    cpu, wall = time.process_time(), time.perf_counter()
    timing = timed()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return replace(timing, cpu_share=cpu / (wall * threads) if wall > 0 else None, threads=threads)
