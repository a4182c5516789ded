"""The runner process of the Ray executor (executors.RayExecutor): connect to a cluster or
start a local Ray instance for the session, claim jobs of the cluster kinds while the
cluster has room, send each as a task (ray_task.run_task), and write what comes back.

It is the one process writing these jobs to the store: their placement, progress and
partial results (drained from the Reporter actor), heartbeats, and the outcome a task
returns. A task whose worker or node died is queued again like a job of a killed local
worker; a cancelled job is told through the actor, and its task is killed with
ray.cancel(force=True) if it has not stopped `cancel_grace` s later.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import dataclass

from core.store import Store, StoreDamaged, StoreFull, StoreReadOnly

from .errors import ExecutorError
from .executors import RayExecutor, Runner
from .outcomes import requeue, settle
from .processes import STORE_REFUSED, enter_own_group
from .queue import CANCELLED, FAILED, Job, JobQueue

# Ray advertises the machine's network address unless it believes it cannot form a
# cluster; then it binds and names 127.0.0.1 only. A session instance stays on loopback.
LOOPBACK_ONLY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
LOCAL_OBJECT_STORE = 128 * 2**20  # bytes: tasks carry JSON text, not tensors
WAIT = 0.1  # longest wait for a task to finish before looking at the store again, s
WATCH_INTERVAL = 0.25  # how often jobs are checked for a cancel, s
CLUSTER_INTERVAL = 5.0  # how often the cluster's size is read again, s
CONNECT_TIMEOUT = 10.0  # for the first answer from a cluster's head, s


def ray_runner_main(given: Runner, executor: RayExecutor) -> None:
    """Entry point of the spawned runner process. On `stop` it cancels its tasks and queues
    their jobs again (no attempt used); when the process that started it is gone, it takes no
    new jobs and exits once its tasks have ended. Like a worker, it exits with STORE_REFUSED,
    saying why, when the store must not be written: read-only, or found damaged by SQLite's
    quick_check on opening or after a job ends."""
    enter_own_group()
    parent = os.getppid()
    try:
        ray = connect(executor)
    except ExecutorError as exc:
        given.notes.send(str(exc))
        raise SystemExit(3) from None
    try:
        with Store(given.store_path) as store:
            store.ensure_writable()
            dispatcher = Dispatcher(ray, JobQueue(store), executor, given)
            given.notes.send(f"Ray runner {os.getpid()} is on {dispatcher.cluster_text()}")
            while not given.stop.is_set():
                orphaned = os.getppid() != parent
                if orphaned and not dispatcher.flights:
                    return
                dispatcher.step(take_jobs=not orphaned)
            dispatcher.interrupt()
    except (StoreDamaged, StoreReadOnly) as exc:  # as a worker does: say why, and stop
        given.notes.send(f"Ray runner {os.getpid()} stopped: {exc}")
        raise SystemExit(STORE_REFUSED) from None
    finally:
        ray.shutdown()


def connect(executor: RayExecutor):
    """ray.init for the executor; returns the ray module. ExecutorError if it cannot."""
    if executor.address is not None:
        _check_reachable(executor.address)
    if executor.loopback:
        os.environ.update(LOOPBACK_ONLY)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray  # here only: a runner process is the only Tessera process that drives Ray

    options = {"address": executor.address, "namespace": "tessera", "log_to_driver": False}
    if executor.address is None:
        options.update(num_cpus=executor.cpus, include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE)
    try:
        ray.init(**options)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError, ... by case
        ray.shutdown()  # whatever it started of a local instance
        raise ExecutorError(f"cannot start or reach {executor.where}: {type(exc).__name__}: {exc}") from None
    return ray


def _check_reachable(address: str) -> None:
    """Ray keeps retrying an address where nothing answers for many minutes; ask first."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise ExecutorError(
            f"nothing answers at the Ray cluster address {address}: {exc}; "
            "start its head with `ray start --head` there, or check the address"
        ) from None


@dataclass
class Flight:
    """A job sent as a task, until its outcome is written."""

    job: Job
    target: str
    cpus: float
    where: str = "a Ray worker"
    cancelled_at: float | None = None
    killed: bool = False


class Dispatcher:
    """Claims, sends and settles the runner's jobs; step() is one round, never long."""

    def __init__(self, ray, queue: JobQueue, executor: RayExecutor, given: Runner):
        from . import ray_task  # imports Ray, so only after connect() set Ray's environment

        self.ray, self.queue, self.executor, self.given = ray, queue, executor, given
        self.handlers = executor.kinds(given.handlers)
        self.task, self.job_text = ray_task.run_task, ray_task.job_text
        self.reporter = ray_task.Reporter.remote()
        errors = ray.exceptions
        #: Ray errors that mean the task's process or node died: its job is queued again
        self.deaths = {
            errors.WorkerCrashedError: "died",
            errors.NodeDiedError: "lost its node",
            errors.LocalRayletDiedError: "lost its node",
            errors.OutOfMemoryError: "was killed by Ray for lack of memory",
            errors.ObjectLostError: "lost its result with its node",
        }
        self.ray_error, self.task_cancelled = errors.RayError, errors.TaskCancelledError
        self.flights: dict[object, Flight] = {}  # ObjectRef -> Flight
        self._last_watch = self._last_heartbeat = self._last_cluster = float("-inf")
        self._cpus = self._gpus = 0.0

    # -- one round ----------------------------------------------------------------------------
    def step(self, take_jobs: bool = True) -> None:
        refs = list(self.flights)
        if refs:
            ready, _ = self.ray.wait(refs, num_returns=1, timeout=WAIT)
        else:
            ready = []
            self.given.stop.wait(WAIT)
        self._read_notes()  # before the outcomes: a task's last partial result comes first
        for ref in ready:
            self._settle(ref, self.flights.pop(ref))
        if ready:  # as a worker does after every job: nothing more is written to a store found damaged
            self.queue.store.check()
            self.queue.store.ensure_writable()
        self._watch()
        if take_jobs:
            self._dispatch()

    def interrupt(self) -> None:
        """Stop every task and queue its job again without using up an attempt."""
        for ref, flight in self.flights.items():
            self.ray.cancel(ref, force=True)
            if flight.cancelled_at is None:  # still ours
                state = self.queue.abandon(
                    flight.job, f"interrupted: Ray runner {os.getpid()} was stopped", count_attempt=False
                )
                self._note(f"{flight.job.describe()} was interrupted and is {state} again")
        self.flights.clear()

    def cluster_text(self) -> str:
        self._read_cluster(force=True)
        gpus = f", {self._gpus:g} GPUs" if self._gpus else ""
        return f"{self.executor.where} ({self._cpus:g} CPUs{gpus}) for {', '.join(self.handlers)}"

    # -- sending -----------------------------------------------------------------------------
    def _dispatch(self) -> None:
        """Claim jobs while the cluster has CPUs for them (the others wait in the queue, where
        people see them waiting, rather than in Ray's)."""
        self._read_cluster()
        while sum(f.cpus for f in self.flights.values()) < self._cpus:
            job = self.queue.claim(self.handlers, runs_on="Ray: waiting for a node")
            if job is None:
                return
            needs = self.executor.resources[job.kind]
            options = {"num_cpus": needs.cpus, "num_gpus": 1 if needs.gpu and self._gpus >= 1 else 0}
            target = self.handlers[job.kind]
            ref = self.task.options(**options).remote(target, self.job_text(job), self.reporter)
            self.flights[ref] = Flight(job, target, needs.cpus)

    def _read_cluster(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_cluster >= CLUSTER_INTERVAL:
            self._last_cluster = now
            resources = self.ray.cluster_resources()
            self._cpus, self._gpus = resources.get("CPU", 0.0), resources.get("GPU", 0.0)

    # -- hearing back --------------------------------------------------------------------------
    def _read_notes(self) -> None:
        if not self.flights:
            return
        by_lease = {f.job.lease: f for f in self.flights.values()}
        for lease, what, value in self.ray.get(self.reporter.drain.remote()):
            flight = by_lease.get(lease)
            if flight is None:
                continue  # an attempt already settled or superseded
            if what == "placed":
                node, ip, pid = value
                flight.where = f"Ray worker {pid} on node {node[:8]} ({ip})"
                self.queue.place(flight.job, f"Ray node {node[:8]} ({ip}), worker {pid}")
            elif what in ("progress", "partial"):
                with contextlib.suppress(StoreFull):  # dropped on a full disk, as a local worker drops them
                    if what == "progress":
                        self.queue.report_progress(flight.job, *value)
                    else:
                        self.queue.save_partial(flight.job, json.loads(value))

    def _settle(self, ref, flight: Flight) -> None:
        job = flight.job
        try:
            outcome = json.loads(self.ray.get(ref))
        except self.ray_error as exc:
            if flight.killed:
                self._note(f"{job.describe()} was cancelled but its handler kept running; stopped {flight.where}")
            elif isinstance(exc, self.task_cancelled):  # cancelled outside Tessera (Ray's dashboard or CLI)
                self.queue.finish(job, CANCELLED, f"its Ray task was cancelled on the cluster ({flight.where})")
            elif death := next((how for kind, how in self.deaths.items() if isinstance(exc, kind)), None):
                for line in requeue(self.queue, job, f"{flight.where} {death} while running {job.describe()}"):
                    self._note(line)
            else:  # the task itself failed: Tessera missing on the node, a runtime environment, ...
                cause = getattr(exc, "cause", None) or exc
                self.queue.finish(
                    job, FAILED, f"Ray could not run it on {flight.where}: {type(cause).__name__}: {cause}"
                )
            return
        settle(self.queue, job, flight.target, outcome)

    def _watch(self) -> None:
        """Heartbeats for running jobs; a job no longer ours is told to stop, then killed."""
        now = time.monotonic()
        beat = now - self._last_heartbeat >= self.given.heartbeat_interval
        if not beat and now - self._last_watch < WATCH_INTERVAL:
            return
        self._last_watch = now
        if beat:
            self._last_heartbeat = now
        for ref, flight in self.flights.items():
            if flight.cancelled_at is None:
                ours = self.queue.heartbeat(flight.job) if beat else self.queue.owns(flight.job)
                if not ours:
                    flight.cancelled_at = now
                    self.reporter.cancel.remote(flight.job.lease)
            elif not flight.killed and now - flight.cancelled_at > self.given.cancel_grace:
                flight.killed = True
                self.ray.cancel(ref, force=True)

    def _note(self, line: str) -> None:
        self.given.notes.send(line)
