"""What a running handler may do besides computing: report progress, notice that its
job was cancelled (or superseded, or handed to another worker), save partial results."""
from __future__ import annotations

import time

from .errors import JobCancelled
from .queue import Job, JobQueue


class JobContext:
    """Passed to every handler as `ctx`. Writes are throttled to one per `min_interval` seconds."""

    def __init__(self, queue: JobQueue, job: Job, min_interval: float = 0.2):
        self.job = job
        #: the partial result an earlier, interrupted attempt saved, or None
        self.previous_partial: dict | None = job.result
        self._queue = queue
        self._min_interval = min_interval
        self._last_report = self._last_check = float("-inf")
        self._cancelled = False

    @property
    def store(self):
        """The job's store, for handlers that write several rows as they go (a search)."""
        return self._queue.store

    def progress(self, fraction: float, message: str = "") -> None:
        """Report progress in [0, 1]; raises JobCancelled once the job is no longer this worker's."""
        now = time.monotonic()
        if now - self._last_report < self._min_interval and fraction < 1:
            return
        self._last_report = self._last_check = now
        if not self._queue.report_progress(self.job, min(max(float(fraction), 0.0), 1.0), str(message)):
            self._cancelled = True
            self.check_cancelled()

    def cancelled(self) -> bool:
        """True once the job was cancelled or superseded (checked at most every min_interval)."""
        now = time.monotonic()
        if not self._cancelled and now - self._last_check >= self._min_interval:
            self._last_check = now
            self._cancelled = not self._queue.owns(self.job)
        return self._cancelled

    def check_cancelled(self) -> None:
        """Raise JobCancelled if cancelled(); call it between steps of long work."""
        if self.cancelled():
            raise JobCancelled(f"{self.job.describe()} was cancelled or taken over; stopping")

    def partial(self, result: dict) -> None:
        """Save a partial result now, so a crash later does not lose it."""
        if not self._queue.save_partial(self.job, result):
            self._cancelled = True
            self.check_cancelled()
