"""Paired, interleaved timing: the candidate and its reference (PyTorch's module, or the
original network) timed in turn within one process, round by round, with the same threads.

A busy machine slows whatever runs while it is busy; timed one after the other, two sides
meet different loads, and a speedup read that way swung from 0.6x to 34x on the same kernel.
Within one round both sides meet nearly the same load, so the ratio of their times in that
round holds where the times themselves do not. The speedup is the median of the per-round
ratios with its 95% interval from order statistics (no assumption about how load is
distributed); rounds go on until that interval is narrow enough (PRECISION) or the time cap.
Each side's absolute latency is its fastest round, the one least disturbed.

Every side is a `Timer`: called with a number of calls, it makes them and returns the seconds
they took; `calibrate` finds the number of calls that lasts a round; `free_cores` says how many
threads the sides may use. Imports neither torch nor TVM: what is timed comes in as callables."""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

Timer = Callable[[int], float]  # makes `number` calls; the seconds they took

CONFIDENCE = 0.95
FEWEST_ROUNDS = 6  # the fewest rounds whose median has a 95% interval by order statistics
PRECISION = 0.10  # rounds stop once the interval's high / low is at most 1 + PRECISION ...
TIME_CAP_S = 10.0  # ... or once they have taken this long
MAX_ROUNDS = 100
SAMPLE_S = 0.25  # how long free_cores watches the machine before the rounds
WIDE = 0.25  # a figure whose interval's high / low exceeds 1 + WIDE is in doubt
CHOICE_ROUND = 0.25  # choosing a side's thread count: rounds of this share of min_repeat_ms


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The `confidence` interval of the median of `values` from order statistics: the l-th
    smallest and l-th largest value, l the largest count with P(Binomial(n, 1/2) < l) at most
    (1 - confidence) / 2. None below FEWEST_ROUNDS values (no such interval exists)."""
    n = len(values)
    tail, below, l = (1 - confidence) / 2, 0.0, 0
    while l < n // 2 and below + math.comb(n, l) / 2**n <= tail:
        below += math.comb(n, l) / 2**n
        l += 1
    if l == 0:
        return None
    ordered = sorted(values)
    return ordered[l - 1], ordered[n - l]


@dataclass(frozen=True)
class Interval:
    """A median with its 95% interval (None when too few rounds give one)."""

    median: float
    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Interval:
        bounds = median_interval(values)
        return cls(statistics.median(values), *(bounds or (None, None)))

    @property
    def width(self) -> float:
        """high / low: 1.0 is exact; inf without an interval."""
        return self.high / self.low if self.low and self.high else math.inf

    def doubt(self, what: str) -> str:
        """Why this figure cannot carry a decision ("" when it can): its interval is wider than WIDE."""
        if self.width <= 1 + WIDE:
            return ""
        if self.low is None or self.high is None:
            return f"{what} has no 95% interval (fewer than {FEWEST_ROUNDS} rounds)"
        return (
            f"{what}'s 95% interval is wider than +-{100 * WIDE / 2:.0f}%: "
            f"{self.median:.3g} [{self.low:.3g}, {self.high:.3g}]"
        )


@dataclass(frozen=True)
class Rounds:
    """What interleaved rounds found: every side's mean ms per call in each round."""

    runs_ms: Mapping[str, tuple[float, ...]]
    reference: str | None  # the side the others are compared with

    def fastest(self, among: Sequence[str] | None = None) -> str:
        """The side (of `among`, default every side but the reference) with the least median."""
        names = among or [n for n in self.runs_ms if n != self.reference]
        return min(names, key=lambda n: statistics.median(self.runs_ms[n]))

    def latency_ms(self, name: str) -> float:
        """The side's absolute latency: its fastest round."""
        return min(self.runs_ms[name])

    def speedup(self, name: str, over: str | None = None) -> Interval | None:
        """The time of `over` (default the reference) over the side's, round by round: the
        median and its interval."""
        over = over or self.reference
        if over is None:
            return None
        ratios = [r / c for r, c in zip(self.runs_ms[over], self.runs_ms[name])]
        return Interval.of(ratios)

    def decided(self, name: str) -> Interval:
        """The figure whose precision ends the rounds: the side's speedup, or its latency when
        there is no reference."""
        return self.speedup(name) or Interval.of(self.runs_ms[name])


def calibrate(timer: Timer, min_repeat_ms: float) -> int:
    """The number of calls that lasts at least min_repeat_ms (doubling from one; doubles as the warm-up)."""
    number = 1
    while timer(number) * 1e3 < min_repeat_ms and number < 1 << 30:
        number *= 2
    return number


def interleave(
    timers: Mapping[str, Timer],
    min_repeat_ms: float,
    reference: str | None = None,
    min_rounds: int = FEWEST_ROUNDS,
    precision: float = PRECISION,
    cap_s: float = TIME_CAP_S,
    judged: Sequence[str] | None = None,
) -> Rounds:
    """Every timer once per round for at least min_repeat_ms, the order reversed every other
    round (so neither side always runs first); at least `min_rounds` rounds (FEWEST_ROUNDS at
    least), then more until the fastest side's figure (Rounds.decided; of the `judged` sides,
    default all but the reference) is within `precision`, `cap_s` has passed or MAX_ROUNDS
    were run."""
    numbers = {name: calibrate(timer, min_repeat_ms) for name, timer in timers.items()}
    runs: dict[str, list[float]] = {name: [] for name in timers}
    order, started = list(timers), time.perf_counter()
    while True:
        for name in order:
            runs[name].append(timers[name](numbers[name]) * 1e3 / numbers[name])
        order.reverse()
        found = Rounds({n: tuple(r) for n, r in runs.items()}, reference)
        done = len(runs[order[0]])
        if done < max(min_rounds, FEWEST_ROUNDS):
            continue
        if done >= MAX_ROUNDS or time.perf_counter() - started > cap_s:
            return found
        if found.decided(found.fastest(judged)).width <= 1 + precision:
            return found


def core_count() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def free_cores(cores: int, sample_s: float = SAMPLE_S) -> int:
    """How many of `cores` no other work is using now (1 at least): the machine's idle share
    over a short sample of /proc/stat; `cores` where it cannot be read. A thread pool larger
    than this waits at every barrier for a thread the scheduler has not run (a busy core slowed
    PyTorch's two threads 400-fold), so timings use this many threads. This process's own
    threads count as busy too: the pools of the run just before (TVM's, torch's OpenMP) still
    spin, and on every core beside them PyTorch's threads wait at their barriers (left out,
    a quiet 2-core machine timed a 0.04 ms kernel on 2 threads and its speedup read 0.10x in
    some runs, 0.31x in others)."""
    first = _idle_and_total()
    if first is None:
        return cores
    time.sleep(sample_s)
    second = _idle_and_total()
    assert second is not None
    idle, total = second[0] - first[0], second[1] - first[1]
    machine = os.cpu_count() or cores
    return max(1, min(cores, round(machine * idle / total) if total > 0 else cores))


def thread_counts(free: int) -> tuple[int, ...]:
    """The thread counts a side is tried on when `free` threads are (core.compile.target.
    fastest_threads): `free`, halved down to one. A small kernel loses more to the pool's
    barriers than it gains from a second thread (PyTorch's 16-channel 16x16 conv: 0.034 ms on
    one thread, 0.041 ms on two, and up to 0.13 ms in some runs); a large one gains most from
    all of them."""
    return tuple(sorted({free >> i for i in range(free.bit_length())}))


def _idle_and_total() -> tuple[int, int] | None:
    """Idle (with waiting for I/O) and total CPU time of the machine so far, in ticks."""
    stat_file = Path("/proc/stat")
    stat = stat_file.read_text().split("\n", 1)[0].split() if stat_file.exists() else []
    if not stat or stat[0] != "cpu":
        return None
    ticks = [int(t) for t in stat[1:9]]
    return ticks[3] + ticks[4], sum(ticks)
