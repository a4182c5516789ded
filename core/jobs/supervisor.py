"""Start runner processes, watch them, and keep the queue honest.

The runners are those of the executors (executors.py): local worker processes by
default, and with a RayExecutor also one process sending the cluster kinds to Ray.
A job whose runner died (a SIGKILL, a segfault inside TVM; here or in another
process) is queued again with the reason, until its attempts run out; a job
cancelled while its handler ignores cancellation gets its worker killed. The
GUI calls start(), poll() from a timer and stop(); the CLI calls run().
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.store import Store, StoreError, StoreFull

from .errors import WorkerCrashed
from .executors import Executor, LocalPool, RayExecutor, Runner
from .outcomes import STALE_AFTER, requeue, take_back_orphans
from .processes import STORE_REFUSED, describe_exit, kill_tree
from .queue import CANCELLED, DONE, HOST, RUNNING, Job, JobQueue
from .registry import handlers as declared_handlers

MAX_IDLE_DEATHS = 3  # workers dying this many times in a row without a job are not restarted
IDLE_ASK = 30.0  # seconds between asking `when_idle` while no work is left


def default_worker_count() -> int:
    return max(1, (os.cpu_count() or 1) - 1)


@dataclass
class _Group:
    """The runners of one executor, for the kinds it takes."""

    executor: Executor
    handlers: dict[str, str]
    idle_deaths: int = 0  # runners that died in a row without a job
    last_exit: str = ""

    @property
    def label(self) -> str:
        return "Ray runner" if isinstance(self.executor, RayExecutor) else "worker"


@dataclass
class _Worker:
    process: multiprocessing.Process
    current: object  # multiprocessing.Value("q"): id of the job a local worker runs, 0 when idle
    group: _Group
    notes: object  # receiving end of the runner's notes pipe, None once it closed


class Supervisor:
    """Runs `workers` worker processes on the store at `store_path` (default store if None).

    `handlers` maps job kinds to 'module:function' paths (default: every declared kind, core.jobs.registry).
    With `ray`, the kinds it takes run as Ray tasks and the workers run the others
    (none are started if no other kind is left). Heartbeats are written every
    `heartbeat_interval` s; a running job of another process's runner is taken back
    after `stale_after` s without one (or at once if its pid on this host is gone); a
    cancelled job's worker (or Ray task) is killed `cancel_grace` s after the cancel if
    still on it. A Supervisor is used once: start ... stop.
    """

    def __init__(
        self,
        store_path: str | Path | None = None,
        workers: int | None = None,
        handlers: dict[str, str] | None = None,
        *,
        ray: RayExecutor | None = None,
        heartbeat_interval: float = 2.0,
        stale_after: float = STALE_AFTER,
        cancel_grace: float = 5.0,
    ):
        self.store = Store(store_path)
        self.queue = JobQueue(self.store)
        self.handlers = declared_handlers() if handlers is None else dict(handlers)
        self.heartbeat_interval = heartbeat_interval
        self.stale_after = stale_after
        self.cancel_grace = cancel_grace
        self._groups: list[_Group] = []
        local = dict(self.handlers)
        if ray is not None:
            remote = ray.kinds(self.handlers)
            self._groups.append(_Group(ray, remote))
            local = {kind: target for kind, target in local.items() if kind not in remote}
        if local or ray is None:
            self._groups.append(_Group(LocalPool(workers or default_worker_count()), local))
        #: runner processes kept running: local workers, and one for Ray
        self.count = sum(group.executor.processes for group in self._groups)
        self._mp = multiprocessing.get_context("spawn")
        self._stop = self._mp.Event()
        self._workers: list[_Worker] = []
        self._reported_until = time.time()

    def describe(self) -> str:
        """'2 local worker processes; a local Ray instance (2 CPUs) for fisher, train'."""
        return "; ".join(group.executor.describe(group.handlers) for group in self._groups)

    # -- life cycle ----------------------------------------------------------------
    def start(self) -> list[str]:
        """Take back jobs left running by dead workers, then start the workers. StoreDamaged or
        StoreReadOnly if the store must not be written."""
        try:
            self.store.ensure_writable()
        except StoreError:
            self.store.close()
            raise
        events = self._take_back_orphans()
        atexit.register(self.stop)  # workers never outlive this interpreter (multiprocessing would wait for them)
        for group in self._groups:
            for _ in range(group.executor.processes):
                self._spawn(group)
        return events

    def poll(self) -> list[str]:
        """One look at workers and jobs; returns what happened, as sentences. Never blocks.
        StoreDamaged (or StoreReadOnly) once a worker found the store must not be written:
        the other workers are stopped first, so nothing writes to it any more."""
        return (
            self._read_notes()
            + self._reap_dead_workers()
            + self._take_back_orphans()
            + self._stop_cancelled()
            + self._report_ended()
        )

    def busy(self) -> bool:
        """Jobs are queued for our kinds, or our workers are running some."""
        return self.queue.has_work(self.handlers, [w.process.pid for w in self._workers])

    def run(
        self,
        forever: bool = False,
        interval: float = 0.25,
        report: Callable[[str], None] = print,
        when_idle: Callable[[Store], int] | None = None,
    ) -> None:
        """start(), then poll until no work is left (or forever), then stop(). Raises
        WorkerCrashed if every worker died before taking a job (a broken installation).
        `when_idle(store)`, run forever, is asked every IDLE_ASK seconds while no job is
        queued or running; it may queue some (it says how many)."""
        for line in self.start():
            report(line)
        asked = time.monotonic()
        try:
            while True:
                if forever and when_idle is not None and time.monotonic() - asked > IDLE_ASK and not self.busy():
                    asked = time.monotonic()
                    if queued := when_idle(self.store):
                        report(f"idle: queued {queued} job(s)")
                busy = forever or self.busy()  # asked before polling, so the last job's end is reported
                for line in self.poll():
                    report(line)
                if not busy and not self.busy():  # and after: the poll may have taken back a dead one's job
                    break
                for group in self._groups:
                    if not any(w.group is group for w in self._workers):
                        raise WorkerCrashed(
                            f"no {group.label} is left: they kept stopping before taking a job "
                            f"(the last {group.last_exit}); see their error output above"
                        )
                time.sleep(interval)
        finally:
            for line in self.stop():
                report(line)

    def stop(self, grace: float = 3.0) -> list[str]:
        """Ask workers to finish, kill those still running after `grace` s (their jobs are
        queued again without using up an attempt), and close the store. Once only."""
        if self._stop.is_set() and not self._workers:
            return []
        atexit.unregister(self.stop)
        self._stop.set()
        deadline = time.monotonic() + grace
        for worker in self._workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
        events = self._read_notes()
        for worker in self._workers:
            kill_tree(worker.process)
            if self.store.damage or self.store.read_only:
                continue  # nothing is written to such a store; the next session takes its jobs back
            for job in self._running_in(worker.process.pid):
                try:
                    state = self.queue.abandon(
                        job, f"interrupted: {worker.group.label} {worker.process.pid} was stopped", count_attempt=False
                    )
                except StoreFull as exc:  # its process is gone: the next look takes it back, no attempt used
                    events.append(f"{job.describe()} was interrupted and stays marked running: {exc}")
                    continue
                events.append(f"{job.describe()} was interrupted and is {state} again")
        self._workers = []
        self.store.close()
        return events

    def __enter__(self) -> Supervisor:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def worker_pids(self) -> list[int]:
        return [w.process.pid for w in self._workers]

    # -- the watching ------------------------------------------------------------------
    def _spawn(self, group: _Group) -> None:
        current = self._mp.Value("q", 0, lock=False)
        notes, sender = self._mp.Pipe(duplex=False)
        target, args = group.executor.runner(
            Runner(
                str(self.store.path),
                group.handlers,
                self._stop,
                current,
                self.heartbeat_interval,
                self.cancel_grace,
                sender,
            )
        )
        process = self._mp.Process(target=target, args=args, name=f"tessera {group.label}")
        process.start()
        sender.close()  # the runner holds the only sending end: its exit reads as EOF here
        self._workers.append(_Worker(process, current, group, notes))

    def _read_notes(self) -> list[str]:
        return [line for worker in self._workers for line in self._notes_of(worker)]

    @staticmethod
    def _notes_of(worker: _Worker) -> list[str]:
        """What a runner had to say (a Ray runner: its cluster, a connection refused, a job requeued)."""
        lines = []
        try:
            while worker.notes is not None and worker.notes.poll():
                lines.append(worker.notes.recv())
        except (EOFError, OSError):
            worker.notes.close()
            worker.notes = None
        return lines

    def _running_in(self, pid: int) -> list[Job]:
        return [j for j in self.queue.jobs([RUNNING]) if j.worker_host == HOST and j.worker_pid == pid]

    def _reap_dead_workers(self) -> list[str]:
        events = []
        for worker in [w for w in self._workers if not w.process.is_alive()]:
            self._workers.remove(worker)
            events += self._notes_of(worker)
            group, pid, how = worker.group, worker.process.pid, describe_exit(worker.process.exitcode)
            kill_tree(worker.process)  # whatever it started (TVM's builders) goes with it
            if worker.process.exitcode == STORE_REFUSED:
                self._refuse_store()
            jobs = self._running_in(pid)
            for job in jobs:
                events += requeue(self.queue, job, f"{group.label} {pid} {how} while running {job.describe()}")
            group.idle_deaths = 0 if jobs or worker.current.value else group.idle_deaths + 1
            group.last_exit = how
            if self._stop.is_set():
                continue
            if group.idle_deaths >= MAX_IDLE_DEATHS:
                events.append(
                    f"{group.label}s keep stopping before taking a job (the last {how}); not starting another"
                )
                continue
            self._spawn(group)
        return events

    def _refuse_store(self) -> None:
        """A worker found the store damaged (or read-only): stop every worker, then say why."""
        self._stop.set()
        for worker in self._workers:
            kill_tree(worker.process)
        self.store.check()
        self.store.ensure_writable()
        raise StoreError(f"a worker stopped because the results store {self.store.path} cannot be written")

    def _take_back_orphans(self) -> list[str]:
        """Running jobs of workers we do not own whose process is gone or silent."""
        return take_back_orphans(self.queue, set(self.worker_pids), self.stale_after)

    def _stop_cancelled(self) -> list[str]:
        """Kill workers still running a job more than cancel_grace s after it was cancelled."""
        events = []
        for worker in self._workers:
            job_id = worker.current.value
            if not job_id:
                continue
            job = self.queue.get(job_id)
            if job.state == CANCELLED and time.time() - (job.finished or 0.0) > self.cancel_grace:
                kill_tree(worker.process)
                events.append(
                    f"{job.describe()} was cancelled but its handler kept running; stopped worker {worker.process.pid}"
                )
        return events

    def _report_ended(self) -> list[str]:
        """'job 7 (measure conv2d) done' / '... failed: reason' for jobs ended since the last look."""
        events = []
        for job in self.queue.ended_since(self._reported_until):
            self._reported_until = max(self._reported_until, job.finished)
            events.append(f"{job.describe()} {job.state}" + (f": {job.error}" if job.state != DONE else ""))
        return events
