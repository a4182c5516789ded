"""Running a handler and writing what came of it, apart, so that the process computing a
job (a local worker, a Ray task) need not be the one writing it to the store; and what
happens to a job whose process died.

An outcome is a JSON-able dict: {"state": "done", "result": {...}} or
{"state": "failed" | "cancelled" | "retry", "error": "..."}. "retry" comes from a handler's
exception with a true `retryable` attribute (e.g. core.devices.SessionLost: its RPC device went
away mid-run): the job is queued again, like one whose process died, until its attempts run out.
"""

from __future__ import annotations

import logging

from core.store import InvalidResult

from .entry_points import resolve
from .errors import JobCancelled
from .queue import CANCELLED, DONE, FAILED, QUEUED, Job, JobQueue

log = logging.getLogger(__name__)
RETRY = "retry"  # an outcome, not a job state: the job goes back to the queue


def run_handler(target: str, job: Job, ctx) -> dict:
    """Call the handler `target` on the job's payload; every failure becomes an outcome."""
    try:
        result = resolve(target)(job.payload, ctx)
    except JobCancelled as exc:
        return {"state": CANCELLED, "error": str(exc)}
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
    if outcome["state"] == RETRY:
        queue.abandon(job, outcome["error"])  # queued again, or failed once its attempts are used up
        return
    queue.finish(job, outcome["state"], outcome["error"])  # a no-op unless the job is still ours


def requeue(queue: JobQueue, job: Job, reason: str) -> list[str]:
    """The process running `job` died (`reason` says which and how): queue the job again, or
    fail it once its attempts are used up (the supervisor then reports it as ended)."""
    if queue.abandon(job, reason) == QUEUED:
        return [f"{reason}; queued again (attempt {job.attempts + 1} of {job.max_attempts} next)"]
    return []
