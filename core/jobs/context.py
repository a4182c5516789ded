"""What a running handler may do besides computing: report progress, notice that its
job was cancelled (or superseded, or handed to another worker), save partial results."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod

from core.store import StoreFull

from .errors import JobCancelled
from .queue import Job, JobQueue


class HandlerContext(ABC):
    """Passed to every handler as `ctx`. Reports and cancellation checks go out at most once
    per `min_interval` seconds; subclasses say where to (the store, or a Ray actor)."""

    def __init__(self, job: Job, min_interval: float = 0.2):
        self.job = job
        #: the partial result an earlier, interrupted attempt saved, or None
        self.previous_partial: dict | None = job.result
        self._min_interval = min_interval
        self._last_report = self._last_check = float("-inf")
        self._cancelled = False

    def progress(self, fraction: float, message: str = "") -> None:
        """Report progress in [0, 1]; raises JobCancelled once the job is no longer this worker's."""
        now = time.monotonic()
        if now - self._last_report < self._min_interval and fraction < 1:
            return
        self._last_report = self._last_check = now
        if not self._report(min(max(float(fraction), 0.0), 1.0), str(message)):
            self._cancelled = True
            self.check_cancelled()

    def cancelled(self) -> bool:
        """True once the job was cancelled or superseded (checked at most every min_interval)."""
        now = time.monotonic()
        if not self._cancelled and now - self._last_check >= self._min_interval:
            self._last_check = now
            self._cancelled = not self._still_ours()
        return self._cancelled

    def check_cancelled(self) -> None:
        """Raise JobCancelled if cancelled(); call it between steps of long work."""
        if self.cancelled():
            raise JobCancelled(f"{self.job.describe()} was cancelled or taken over; stopping")

    def partial(self, result: dict) -> None:
        """Save a partial result now, so a crash later does not lose it."""
        if not self._save_partial(result):
            self._cancelled = True
            self.check_cancelled()

    # -- where reports go; each returns False once the job is no longer this worker's ---------
    @abstractmethod
    def _report(self, fraction: float, message: str) -> bool:
        """Pass on progress."""

    @abstractmethod
    def _still_ours(self) -> bool:
        """Whether the job still runs under this attempt's lease."""

    @abstractmethod
    def _save_partial(self, result: dict) -> bool:
        """Keep a partial result where the next attempt finds it."""


class JobContext(HandlerContext):
    """The context of a job run by a local worker process, which writes to the store itself.
    A full disk is not the job's fault: progress and partial results that meet one are
    dropped (the job runs on; its outcome waits to be written, core.jobs.worker)."""

    def __init__(self, queue: JobQueue, job: Job, min_interval: float = 0.2):
        super().__init__(job, min_interval)
        self._queue = queue

    @property
    def store(self):
        """The job's store, for handlers that write several rows as they go (a search)."""
        return self._queue.store

    def _report(self, fraction: float, message: str) -> bool:
        try:
            return self._queue.report_progress(self.job, fraction, message)
        except StoreFull:
            return True  # reported again once space is freed

    def _still_ours(self) -> bool:
        return self._queue.owns(self.job)

    def _save_partial(self, result: dict) -> bool:
        try:
            return self._queue.save_partial(self.job, result)
        except StoreFull:
            return True  # an interrupted attempt then starts from the last partial result kept
