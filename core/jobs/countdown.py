"""The time left of running jobs as a window shows it: each job's estimate at its pace so far
(Job.time_left) jumps with the phases of its work (a tune searches, builds, then measures each
batch: 4:38, 7:10, 1:02 within a minute), so what is shown counts down steadily and moves
towards a new estimate over about half a minute."""

from __future__ import annotations

import math

from .queue import Job

SMOOTHING_S = 30.0  # how long a changed estimate takes to show (to 1 - 1/e of the change)


class Countdown:
    """Smoothed time left per job, for one watcher (one job monitor)."""

    def __init__(self, smoothing_s: float = SMOOTHING_S):
        self.smoothing_s = smoothing_s
        self._shown: dict[int, tuple[float, float]] = {}  # job id -> (when, seconds left shown then)

    def left(self, job: Job, now: float) -> float | None:
        """Seconds left to show for `job` at time `now`; None while it has no estimate."""
        estimate = job.time_left(now)
        if estimate is None:
            self._shown.pop(job.id, None)
            return None
        shown = self._shown.get(job.id)
        if shown is not None:
            when, left = shown
            counted = max(left - (now - when), 0.0)  # the last value shown, counted down since
            weight = 1.0 - math.exp(-max(now - when, 0.0) / self.smoothing_s)
            estimate = counted + weight * (estimate - counted)
        self._shown[job.id] = (now, estimate)
        return estimate
