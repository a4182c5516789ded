"""A disk that fills while a job runs keeps the job: its progress reports are dropped, its
outcome waits in memory and is written once space returns, and no attempt is spent (faults
injected where the store raises StoreFull; tests/core/full_disk.py fills a real small disk)."""

from __future__ import annotations

import threading

import pytest

from core.jobs import worker
from core.jobs.queue import DONE, QUEUED, JobQueue
from core.jobs.worker import run_job
from core.store import Store
from core.store.errors import disk_full

from .job_kinds import HERE, TEST_HANDLERS


@pytest.fixture
def full_disk(tmp_path, monkeypatch):
    """A store whose progress writes always meet a full disk and whose first 3 outcome writes do
    too (the disk is full, then space is freed); the worker retries every 10 ms."""
    path = tmp_path / "results.db"
    failures = {"outcome": 3}

    def full(*args, **kwargs):
        raise disk_full(path, "database or disk is full")

    def complete_once_freed(self, job, result):
        if failures["outcome"]:
            failures["outcome"] -= 1
            full()
        return real_complete(self, job, result)

    real_complete = JobQueue.complete
    monkeypatch.setattr(JobQueue, "report_progress", full)
    monkeypatch.setattr(JobQueue, "save_partial", full)
    monkeypatch.setattr(JobQueue, "complete", complete_once_freed)
    monkeypatch.setattr(worker, "FULL_WAIT", (0.01, 0.01))
    with Store(path) as store:
        yield JobQueue(store), failures


def test_a_job_whose_disk_fills_while_it_runs_ends_done_with_its_result(full_disk):
    queue, failures = full_disk
    job_id = queue.submit("sleep", {"seconds": 0.2, "steps": 4})
    job = queue.claim(["sleep"])
    run_job(queue, job, TEST_HANDLERS["sleep"], 0.05, threading.Event())
    job = queue.get(job_id)
    assert failures["outcome"] == 0  # the outcome met the full disk 3 times, then was written
    assert (job.state, job.attempts, job.result, job.error) == (DONE, 1, {"slept": 0.2}, None)


def test_a_handler_stopped_by_a_full_disk_is_queued_again_without_spending_an_attempt(full_disk):
    queue, _ = full_disk
    job_id = queue.submit("full", {})
    job = queue.claim(["full"])
    run_job(queue, job, f"{HERE}:full_store_job", 0.05, threading.Event())
    job = queue.get(job_id)
    assert (job.state, job.attempts) == (QUEUED, 0) and "is full" in job.error
