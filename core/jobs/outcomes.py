"""Running a handler and writing what came of it, apart, so that the process computing a
job (a local worker, a Ray task) need not be the one writing it to the store; and what
happens to a job whose process died (take_back_orphans: the one rule for every process).

An outcome is a JSON-able dict: {"state": "done", "result": {...}} or
{"state": "failed" | "cancelled" | "retry", "error": "..."}. "retry" comes from a handler's
exception with a true `retryable` attribute (e.g. core.devices.SessionLost: its RPC device went
away mid-run): the job is queued again, like one whose process died, until its attempts run out;
and from a StoreFull the handler met writing to the store ("attempt_spent": false): a full disk
is not the job's fault, so it is queued again with its attempt given back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection

from core.store import InvalidResult, StoreFull
from core.typed_json import JsonRecord

from .code_paths import resolve
from .errors import JobCancelled
from .processes import pid_alive
from .queue import CANCELLED, DONE, FAILED, HOST, QUEUED, RUNNING, Job, JobQueue

log = logging.getLogger(__name__)
STALE_AFTER = 120.0  # s without a heartbeat after which a running job is taken back
RETRY = "retry"  # an outcome, not a job state: the job goes back to the queue


def run_handler(target: str, job: Job, ctx) -> dict:
    """Call the handler `target` on the job's payload; every failure becomes an outcome, and a
    typed result its JSON (the outcome may cross to another process)."""
    try:
        result = resolve(target)(job.payload, ctx)
        if isinstance(result, JsonRecord):  # its kind's type; checked again where it is written
            result = result.to_dict()
    except JobCancelled as exc:
        return {"state": CANCELLED, "error": str(exc)}
    except StoreFull as exc:  # the disk's fault, not the job's: run again, no attempt spent
        return {"state": RETRY, "error": str(exc), "attempt_spent": False}
    except Exception as exc:
        log.debug("%s failed", job.describe(), exc_info=True)
        state = RETRY if getattr(exc, "retryable", False) else FAILED
        return {"state": state, "error": f"{type(exc).__name__}: {exc}"}
    if not isinstance(result, dict):
        return {"state": FAILED, "error": f"its handler {target} returned {type(result).__name__}, not a dict"}
    return {"state": DONE, "result": result}


def invalid_result(target: str, exc: Exception) -> dict:
    return {"state": FAILED, "error": f"its handler {target} returned an invalid result: {exc}"}


def settle(queue: JobQueue, job: Job, target: str, outcome: dict) -> None:
    """Write the outcome of a job this process owns: its result rows and state together, or
    the failure. Nothing is written if the job was cancelled or taken over meanwhile."""
    if outcome["state"] == DONE:
        try:
            queue.complete(job, outcome["result"])
            return
        except (InvalidResult, TypeError, ValueError) as exc:
            outcome = invalid_result(target, exc)
    if outcome["state"] == RETRY:  # queued again, or failed once its attempts are used up
        queue.abandon(job, outcome["error"], outcome.get("attempt_spent", True))
        return
    queue.finish(job, outcome["state"], outcome["error"])  # a no-op unless the job is still ours


def requeue(queue: JobQueue, job: Job, reason: str, count_attempt: bool = True) -> list[str]:
    """The process running `job` died (`reason` says which and how): queue the job again, or
    fail it once its attempts are used up (the supervisor then reports it as ended). Without
    `count_attempt`, the attempt it was on is given back."""
    if queue.abandon(job, reason, count_attempt) == QUEUED:
        attempt = job.attempts + 1 if count_attempt else job.attempts
        return [f"{reason}; queued again (attempt {attempt} of {job.max_attempts} next)"]
    return []


def take_back_orphans(queue: JobQueue, ours: Collection[int] = (), stale_after: float = STALE_AFTER) -> list[str]:
    """Queue again the running jobs whose runner is gone, except those of the runners `ours`
    (pids on this host, which their own supervisor watches); returns what it did, as sentences.

    The rule, the same for every process that looks (a supervisor, `tessera jobs`, the
    explorer): a runner on this host whose process has ended died with the application that
    started it (a crash, a kill; runners end with their parent), so its job is queued again
    without using up an attempt. A runner anywhere that sent no heartbeat for `stale_after` s
    may be stuck on its job, which then uses one. (A runner that dies while its supervisor
    watches is that supervisor's to report, and uses one.)"""
    events = []
    for job in queue.jobs([RUNNING]):
        here = job.worker_host == HOST
        if here and job.worker_pid in ours:
            continue
        who = f"worker {job.worker_pid}" if here else f"worker {job.worker_host}:{job.worker_pid}"
        silent = time.time() - (job.heartbeat or 0.0)
        # the runner existed before its last heartbeat: a process made after it reuses the pid
        if here and not pid_alive(job.worker_pid or 0, job.heartbeat):
            events += requeue(queue, job, f"interrupted: {who} is gone while running {job.describe()}", False)
        elif silent > stale_after:
            events += requeue(queue, job, f"{who} sent no heartbeat for {silent:.0f} s while running {job.describe()}")
    return events
