"""The time left of running jobs as a window shows it.

A job's progress is not linear in time: a tune holds still while its worker warms up and its
first batch is searched and built (most of a small budget's time), then moves with each trial
measured, then spends a few seconds checking and timing what it found. So the time left comes
from the job's rate since its start-up (a stall of its progress well over any before it), and
until progress moved twice after that stall there is none ("estimating..."). A stall now slows
that rate, so the time left grows rather than running out. What follows the work a rate
measures is learnt from the last job of the same kind the watcher saw to the end: what it had
left from the same progress. Running time only (a job's start is its current attempt's,
core.jobs.queue); what is shown counts down steadily towards a new estimate, within 0.7 and 1.3
times it; while work remains, never 0 s."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .queue import DONE, RUNNING, Job

SMOOTHING_S = 30.0  # how long a changed estimate takes to show (to 1 - 1/e of the change)
SHOWN_WITHIN = (0.7, 1.3)  # what is shown stays within these shares of the fresh estimate
MIN_LEFT_S = 1.0  # while work remains
LONGER = 2.0  # a stall this many times the start-up taken so far is a new start-up


def kind_key(job: Job) -> tuple:
    """Jobs that go about alike: kind, algorithm, trials, top-k."""
    payload = job.payload if isinstance(job.payload, dict) else {}
    return (job.kind, payload.get("algorithm"), payload.get("tune_trials"), payload.get("top_k"))


@dataclass
class Pace:
    """How one attempt of a job moved: its progress `level` held since `since`, the stall taken
    for its start-up, and its samples (running seconds, progress) from the moment progress
    moved again after that stall (the first is the `anchor`). Steady steps vary in length; only
    a stall well over the start-up taken so far (LONGER times) is a new start-up."""

    started: float
    level: float = 0.0
    since: float = 0.0
    start_up: float = -1.0  # seconds
    samples: list[tuple[float, float]] = field(default_factory=list)
    moves: int = 0  # how often progress moved since the anchor

    def watch(self, ran: float, progress: float) -> None:
        if progress > self.level:
            if ran - self.since > LONGER * self.start_up:
                self.start_up, self.samples, self.moves = ran - self.since, [], -1
            self.level, self.since, self.moves = progress, ran, self.moves + 1
        if self.level > 0:  # progress moved: the start-up taken so far is over
            self.samples.append((ran, progress))

    def left(self, ran: float, progress: float) -> float | None:
        """Seconds left at the rate since the start-up; None until progress moved twice after
        it (a job's first steps, such as a tune's setup before its long warm-up, would pass for
        a rate), or while a stall well over the start-up is under way (a new one)."""
        if self.moves < 2 or progress >= 1.0:
            return None
        if ran - self.since > LONGER * self.start_up:
            return None
        at, done = self.samples[0]
        return (1.0 - progress) * (ran - at) / (progress - done)

    def profile(self, finished: float) -> list[tuple[float, float]]:
        """(progress, seconds left) after the start-up, for a job that took `finished` seconds."""
        return [(progress, finished - ran) for ran, progress in self.samples]


def profiled(profile: list[tuple[float, float]], progress: float) -> float | None:
    """Seconds a job of the kind had left when it was where this one is now (None if it did
    not pass here after its start-up). What follows the work a rate measures (a tune's check
    and timing after its last trial) is in it."""
    if not profile or profile[0][0] > progress:
        return None
    return next((left for done, left in profile if done >= progress), None)


class Countdown:
    """Smoothed time left per job, for one watcher (a job monitor), which calls `left` for each
    job whenever it shows it: those calls are the samples its pace is measured from. The last
    job of a kind it saw to the end tells how much of the next one's time comes after its
    rate's work: the time left is the larger of what the rate says and what that job had left
    at the same progress."""

    def __init__(self, smoothing_s: float = SMOOTHING_S):
        self.smoothing_s = smoothing_s
        self._paces: dict[int, Pace] = {}
        self._profiles: dict[tuple, list[tuple[float, float]]] = {}  # kind -> (progress, seconds left)
        self._shown: dict[int, tuple[float, float]] = {}  # job id -> (when, seconds left shown then)

    def left(self, job: Job, now: float) -> float | None:
        """Seconds left to show for `job` at time `now`; None while it has no estimate."""
        if job.state != RUNNING or job.started is None:
            pace = self._paces.pop(job.id, None)
            if pace is not None and job.state == DONE and job.finished is not None and pace.samples:
                self._profiles[kind_key(job)] = pace.profile(job.finished - pace.started)
            self._shown.pop(job.id, None)
            return None
        pace = self._paces.get(job.id)
        if pace is None or pace.started != job.started:  # a new attempt starts from zero
            pace = self._paces[job.id] = Pace(job.started)
        ran, progress = max(now - job.started, 0.0), min(max(job.progress or 0.0, 0.0), 1.0)
        pace.watch(ran, progress)
        fresh = pace.left(ran, progress)
        if fresh is None:
            self._shown.pop(job.id, None)
            return None
        fresh = max(fresh, profiled(self._profiles.get(kind_key(job), []), progress) or 0.0, MIN_LEFT_S)
        shown = fresh
        before = self._shown.get(job.id)
        if before is not None:
            when, left = before
            counted = max(left - (now - when), 0.0)  # the last value shown, counted down since
            weight = 1.0 - math.exp(-max(now - when, 0.0) / self.smoothing_s)
            low, high = SHOWN_WITHIN
            shown = min(max(counted + weight * (fresh - counted), low * fresh, MIN_LEFT_S), high * fresh)
        self._shown[job.id] = (now, shown)
        return shown
