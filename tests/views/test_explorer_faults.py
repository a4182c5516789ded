"""The explorer's session on a store it may only read, and its workers ending with it."""

from __future__ import annotations

import time

import pytest

from core.ir.serialize import read_document
from core.jobs.processes import pid_alive
from core.jobs.queue import QUEUED, RUNNING, JobQueue
from core.jobs.supervisor import Supervisor
from core.store import Store, StoreReadOnly
from tests.core.job_kinds import TEST_HANDLERS
from tests.support import EXAMPLES
from views.explorer.session import ExplorerSession


def test_the_window_closing_ends_its_workers_and_their_jobs_are_queued_again(qtbot, store_path):
    with Store(store_path) as store:
        job_id = JobQueue(store).submit("sleep", {"seconds": 600, "steps": 6000})
    session = ExplorerSession(store_path)
    session.supervisor = Supervisor(store_path, workers=1, handlers=TEST_HANDLERS)
    session.supervisor.start()
    qtbot.waitUntil(lambda: session.queue.get(job_id).state == RUNNING, timeout=20_000)
    worker = session.queue.get(job_id).worker_pid
    started = time.monotonic()
    session.shutdown()  # what the window's closeEvent does
    assert time.monotonic() - started < 5  # bounded: the job is not waited for
    assert not pid_alive(worker)
    with Store(store_path) as store:
        job = JobQueue(store).get(job_id)
    assert (job.state, job.attempts) == (QUEUED, 0)


def test_the_explorer_reads_a_read_only_store(qtbot, store_path):
    with Store(store_path) as store:
        operator = store.add_operator(read_document(EXAMPLES / "conv2d.json"), "conv2d")
        for i in range(5):
            store.add_measurement(operator, None, {"latency_ms": 1.0 + i, "flops": 1e6})
    store_path.chmod(0o444)
    session = ExplorerSession(store_path)
    try:
        qtbot.waitUntil(lambda: session.loaded and session.frame.count == 5, timeout=20_000)
        with pytest.raises(StoreReadOnly, match="the file is read-only"):
            session.rename_operator(operator, "mine")
        session.start_workers()  # refused, with the reason in the status bar
        assert not session.workers_running
    finally:
        session.shutdown()
