"""A worker process: claim a job, run its handler with a JobContext while a thread keeps
the job's heartbeat, write the outcome; repeat until told to stop or orphaned."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path

from core.store import Store, StoreDamaged, StoreError, StoreFull, StoreReadOnly

from .context import JobContext
from .outcomes import run_handler, settle
from .processes import STORE_FULL, STORE_REFUSED, enter_own_group
from .queue import Job, JobQueue

IDLE_WAIT = (0.05, 0.5)  # first and longest pause between looks at an empty queue, s
FULL_WAIT = (1.0, 30.0)  # first and longest pause between tries to write an outcome to a full disk, s


def worker_main(store_path: str, handlers: dict[str, str], stop, current, heartbeat_interval: float) -> None:
    """Entry point of a spawned worker process. `stop` is a multiprocessing Event; `current`
    a shared integer set to the id of the job being run (0 when idle). The worker also
    stops, after its current job, when the process that started it is gone, and at once, with
    exit code STORE_REFUSED, when the store must not be written (damaged, read-only): it is
    checked with SQLite's quick_check on opening and after every job. A finished job's outcome
    that meets a full disk waits, in memory, until it can be written (settle_when_written);
    a worker that cannot open the store for a full disk exits with STORE_FULL."""
    enter_own_group()
    parent = os.getppid()
    try:
        with Store(store_path) as store:
            store.ensure_writable()
            queue = JobQueue(store)
            pause = IDLE_WAIT[0]
            while not stop.is_set() and os.getppid() == parent:
                job = queue.claim(handlers)
                if job is None:
                    stop.wait(pause)
                    pause = min(pause * 2, IDLE_WAIT[1])
                    continue
                pause = IDLE_WAIT[0]
                current.value = job.id
                try:
                    run_job(queue, job, handlers[job.kind], heartbeat_interval, stop)
                finally:
                    current.value = 0
                store.check()
                store.ensure_writable()
    except (StoreDamaged, StoreReadOnly, StoreFull) as exc:
        print(f"worker {os.getpid()} stopped: {exc}", file=sys.stderr, flush=True)
        sys.exit(STORE_FULL if isinstance(exc, StoreFull) else STORE_REFUSED)


def run_job(queue: JobQueue, job: Job, target: str, heartbeat_interval: float, stop) -> None:
    """Run one claimed job to its end state (done / failed / cancelled)."""
    with _Heartbeat(queue.store.path, job, heartbeat_interval):
        outcome = run_handler(target, job, JobContext(queue, job))
        settle_when_written(queue, job, target, outcome, stop)


def settle_when_written(queue: JobQueue, job: Job, target: str, outcome: dict, stop) -> None:
    """settle(), and while the disk is full, keep the outcome and try again (the job stays
    running, its heartbeat beating) until it is written. Told to `stop` meanwhile, the worker
    gives up with StoreFull: its job, left running by a process that is gone, is queued again
    without using up an attempt."""
    pause = FULL_WAIT[0]
    while True:
        try:
            settle(queue, job, target, outcome)
            return
        except StoreFull as exc:
            if pause == FULL_WAIT[0]:
                print(
                    f"worker {os.getpid()}: {exc}; the outcome of {job.describe()} waits to be written",
                    file=sys.stderr,
                    flush=True,
                )
            if stop.wait(pause):
                raise
            pause = min(pause * 2, FULL_WAIT[1])


class _Heartbeat(threading.Thread):
    """A thread with its own connection that stamps the job's heartbeat every `interval` s,
    so other processes can tell a live worker from a vanished one."""

    def __init__(self, store_path: Path, job: Job, interval: float):
        super().__init__(name=f"heartbeat {job.id}", daemon=True)
        self.store_path, self.job, self.interval = store_path, job, interval
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            with Store(self.store_path, check=False) as store:
                queue = JobQueue(store)
                while not self.stopped.wait(self.interval):
                    with contextlib.suppress(StoreFull):  # it beats again once space is freed
                        if not queue.heartbeat(self.job):
                            return
        except StoreError:
            return  # the job's own writes meet the same error and say what it is

    def __enter__(self) -> _Heartbeat:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.join()
