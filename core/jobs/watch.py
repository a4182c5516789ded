"""The jobs a window must redraw after a poll, read without scanning the whole queue:
every job the first time; then the active ones, those active at the last poll (they may
have ended) and those that ended lately (queued and done in between)."""

from __future__ import annotations

import time

from .queue import QUEUED, RUNNING, Job, JobQueue

ENDED_MARGIN_S = 30.0  # jobs that ended this long before the last poll are read again


class JobWatcher:
    def __init__(self, queue: JobQueue):
        self.queue = queue
        self._active: set[int] = set()
        self._last_poll: float | None = None

    def changed_jobs(self) -> dict[int, Job]:
        started = time.time()
        if self._last_poll is None:
            jobs = {j.id: j for j in self.queue.jobs()}
        else:
            jobs = {j.id: j for j in self.queue.jobs([QUEUED, RUNNING])}
            for job_id in self._active - set(jobs):
                jobs[job_id] = self.queue.get(job_id)
            for job in self.queue.ended_since(self._last_poll - ENDED_MARGIN_S):
                jobs.setdefault(job.id, job)
        self._active = {j.id for j in jobs.values() if j.state in (QUEUED, RUNNING)}
        self._last_poll = started
        return jobs
