"""A measure job's progress as the share of its expected running time it has spent.

A tune's work is not its time. A tune of 8 trials of a small convolution spent 13 s warming
up, searching and building its batch, 1.2 s measuring the 8 trials, then 2-4 s (up to 15 s on
a busy machine) checking the chosen records, building the variants and timing them against
PyTorch; progress counted in trials said 1 s was left at its fourth trial when 4 s were. The
handler knows which phases remain, so it reports progress = elapsed / (elapsed + expected
seconds left), never decreasing and under 1 until done: whoever reads progress p after t
seconds of running reads t (1 - p) / p left (core.jobs.queue.time_left_at, for the command
line and the window's countdown), with nothing more carried.

What is left is estimated from what this job has measured of itself (`Expected`):
- a kernel's build and check: the untuned kernel is built and checked before tuning;
- a trial: the median pace of the trials measured so far (candidates are measured one after
  another once their batch is built; on a busy machine one trial in eight took 19 s where the
  others took 0.2 s, and a mean would have taken it for the pace of the rest);
- a later batch's search and build: the time the last one took (the first includes the
  warm-up and the build processes' start: an estimate on the long side);
- after tuning: the check of the chosen record (CHECK_BUILDS builds), a build for each variant
  not yet built, and the timing rounds (`rounds_s`), which run between bounds the settings set;
  on a busy machine all of it slows more than the early build says (`busy_slowdown`).
Until a first trial is measured (or, untuned, the kernel built), nothing says how long the rest
takes: progress stays where the job's start put it, under core.jobs.queue.BASIS
("estimating...")."""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable

from ..jobs.queue import BASIS
from .rounds import CHOICE_ROUND, FEWEST_ROUNDS, MAX_ROUNDS, SAMPLE_S, TIME_CAP_S
from .settings import Settings

MAX_SLOWDOWN = 1.25  # the most busy_slowdown stretches what follows a search
Progress = Callable[[float, str], None]  # (fraction, message), as core.compile.kernels.protocol's (which imports TVM)
STARTED = 0.01  # a running job's progress before it can estimate (its setup's report)
LAST = 0.99  # progress stays under this until the job is done
# checking the chosen record after tuning: TVM's default schedule built and run as its reference,
# the record's trace applied, built (a tuned schedule builds slower) and run; measured at about
# four builds of the untuned kernel (0.4 s against 0.1 s on a quiet machine, 0.9 s against 0.19 s
# on a busy one)
CHECK_BUILDS = 4
assert STARTED < BASIS


def rounds_s(settings: Settings, sides: int, counts: int = 1) -> float:
    """Expected seconds of timing `sides` kernels (PyTorch among them) in interleaved rounds
    (core.compile.rounds): the sample of free cores, each side's choice among `counts` thread
    counts where there is one (core.compile.target.fastest_threads: a calibration and the
    fewest rounds per count, each CHOICE_ROUND of min_repeat_ms), each side's calibration
    (calls doubled until they last min_repeat_ms: about twice that), and the middle of what the rounds may
    take on a log scale (the rounds needed for a precision vary by factors): at least
    max(repeat, FEWEST_ROUNDS) rounds, at most MAX_ROUNDS or TIME_CAP_S (they stop between,
    once the speedup is precise enough), each side's call lasting min_repeat_ms. The rounds of
    a small kernel took 0.3-1.6 s on a quiet machine, and up to 2.3 s on a busy one, which
    runs them to their most with longer calls (busy_slowdown stretches the estimate there).
    The guess is right within a factor of 1.8 with the default settings (10 rounds at least,
    the 10 s cap at most), within 4 where the rounds may stop anywhere from 6 to 100."""
    per_round = sides * settings.min_repeat_ms / 1e3
    fewest = max(settings.repeat, FEWEST_ROUNDS) * per_round
    most = max(fewest, min(TIME_CAP_S, MAX_ROUNDS * per_round))
    choice = (2 + FEWEST_ROUNDS) * CHOICE_ROUND * per_round * counts if counts > 1 else 0.0
    return SAMPLE_S + choice + 2 * per_round + math.sqrt(fewest * most)


def busy_slowdown() -> float:
    """How much longer than the early build says the work after a search takes on a busy
    machine: the runnable processes beyond this job's own (the load average less one) per core,
    1 at least, MAX_SLOWDOWN at most. An 8-trial tune beside a load of 4 to 7 on 2 cores spent
    up to 2-3 times as long after its trials as its early build and the rounds' middle said
    (its checks and builds slow, the rounds run to their most, each call longer), yet on the
    same load its rounds sometimes stopped early: a stretch of 1.5 made such a run's remainder
    1.6-2 times too long, so the stretch stays small."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return min(max((load - 1) / (os.cpu_count() or 1), 1.0), MAX_SLOWDOWN)


class Expected:
    """A measure job's seconds left, reported as progress (the module's doc). `started` is when
    the job's running time began (time.time(): its attempt's start, or the process's for a
    one-shot call), so the share is of the time the reader counts."""

    def __init__(self, settings: Settings, progress: Progress, started: float | None = None, counts: int = 1):
        self.settings, self._progress, self.counts = settings, progress, counts  # counts: rounds_s's
        self.started = time.time() if started is None else started
        self.shown = STARTED
        self.build_s: float | None = None  # building and checking one kernel

    def report(self, left: float | None, message: str) -> None:
        """Progress for `left` expected seconds (None: no estimate yet), never moving back."""
        if left is not None:
            elapsed = max(time.time() - self.started, 1e-3)
            self.shown = max(self.shown, min(elapsed / (elapsed + max(left, 0.0)), LAST))
        self._progress(self.shown, message)

    def done(self) -> None:
        self._progress(1.0, "done")

    def built(self, seconds: float) -> None:
        """A kernel took `seconds` to build and check."""
        self.build_s = seconds

    def after_search(self, builds: int, sides: int) -> float | None:
        """Seconds from the end of a search: `builds` kernel builds (with their checks) and the
        rounds timing `sides` kernels, as slow as the machine is busy."""
        if self.build_s is None:
            return None
        return (builds * self.build_s + rounds_s(self.settings, sides, self.counts)) * busy_slowdown()

    def tuning(self, per_batch: float, after: Callable[[], float | None]) -> Progress:
        """The progress callback for a search (kernel.tune, transfer's tries): it reports the
        share of its trials done, as (fraction, message); a report that does not move the share
        marks a phase (a batch searched, built), and the trials after it go at a steady pace.
        Trials come in batches of `per_batch` of the share (1: one batch); `after()` is what
        follows the search, in seconds."""
        return _Search(self, per_batch, after).report


class _Search:
    """A search's trials as they are reported: their median pace, the last batch's search and
    build, and the seconds left of the search from them."""

    def __init__(self, expected: Expected, per_batch: float, after: Callable[[], float | None]):
        self.expected, self.per_batch, self.after = expected, per_batch, after
        self.level: float | None = None  # the share of trials done
        self.batch_end = 0.0  # the share done when this batch is done
        self.phase = time.monotonic()  # when the last report that did not move the share came
        self.last_trial = self.phase  # when the last trial (or the search's start) was reported
        self.overhead_s = 0.0  # the last batch's search and build
        self.paces: list[float] = []  # each trial's seconds per share of trials

    def report(self, fraction: float, message: str) -> None:
        now = time.monotonic()
        if self.level is None:  # the search's first report: where its budget stands
            self.level, self.batch_end = fraction, min(fraction + self.per_batch, 1.0)
        if fraction > self.level:
            if self.last_trial <= self.phase:  # the batch's first trial: its search and build are over
                self.overhead_s = self.phase - self.last_trial
            self.paces.append((now - max(self.phase, self.last_trial)) / (fraction - self.level))
            self.last_trial, self.level = now, fraction
        else:
            if fraction >= self.batch_end and fraction < 1.0:  # a new batch's phase
                self.batch_end = min(fraction + self.per_batch, 1.0)
            self.phase = now
        self.expected.report(self.left(), message)

    def left(self) -> float | None:
        after = self.after()
        if not self.paces or after is None or self.level is None:
            return None
        batches = math.ceil(max(1.0 - self.batch_end, 0.0) / self.per_batch - 1e-9)
        return (1.0 - self.level) * statistics.median(self.paces) + batches * self.overhead_s + after
