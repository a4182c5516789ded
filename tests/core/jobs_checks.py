"""Helpers for tests that drive real supervisors and worker processes."""

from __future__ import annotations

import os
import signal
import time

from core.jobs.queue import DONE, RUNNING, JobQueue
from core.jobs.supervisor import Supervisor
from core.store import Store


def poll_until(supervisor: Supervisor, condition, timeout: float = 20.0, what: str = "") -> list[str]:
    """Poll the supervisor (as the GUI timer does) until condition() holds; returns its events."""
    events = []
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}; events: {events}")
        time.sleep(0.05)
        events += supervisor.poll()
    return events


def check_worker_killed_mid_job(
    store_path, job_id: int, handlers: dict[str, str], started=lambda job: True, timeout: float = 60.0
):
    """Run the queued job `job_id` (of any kind: a busy loop, a TVM build), SIGKILL its worker
    once it runs and `started(job)` holds, and check that the supervisor names the death
    ("worker N was killed by signal SIGKILL while running job J (kind ...)"), queues the job
    again and the second attempt finishes. Returns (job, events)."""
    with Store(store_path) as store:
        queue = JobQueue(store)
        supervisor = Supervisor(store_path, workers=1, handlers=handlers)
        events = supervisor.start()
        try:
            events += poll_until(
                supervisor,
                lambda: started(queue.get(job_id)) and queue.get(job_id).state == RUNNING,
                timeout,
                "the job to run",
            )
            victim = queue.get(job_id).worker_pid
            os.kill(victim, signal.SIGKILL)
            events += poll_until(supervisor, lambda: queue.get(job_id).state == DONE, timeout, "the retry to finish")
        finally:
            events += supervisor.stop()
        job = queue.get(job_id)
    death = f"worker {victim} was killed by signal SIGKILL while running {job.describe()}"
    assert any(death in e and "queued again" in e for e in events), events
    assert job.attempts == 2 and job.worker_pid != victim
    return job, events


def supervise_forever(store_path: str, handlers: dict[str, str], workers: int) -> None:
    """Entry point of a spawned 'controlling process' that a test can kill."""
    Supervisor(store_path, workers=workers, handlers=handlers).run(forever=True, report=lambda line: None)
