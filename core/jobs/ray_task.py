"""The part of a Ray job that runs on a cluster node: a task that runs one job's handler
and returns its outcome as JSON text, and the actor through which running tasks tell the
runner where they run, their progress and partial results, and learn of a cancel.

A task gets the job as JSON (kind, operator document and bindings in the payload, an
earlier attempt's partial result), never a live object, and never opens the store: the
runner process that sent it writes everything. Progress reaches the store when the runner
next drains the actor (a few times a second), so it is as fine as the handler's reports.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict

import ray

from .context import HandlerContext
from .errors import ExecutorError
from .outcomes import invalid_result, run_handler
from .queue import Job


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class Reporter:
    """What running tasks report, kept until the runner drains it, by job lease (so a report
    from an attempt that was superseded is told apart); and the leases cancelled since."""

    def __init__(self):
        self._notes: list[tuple[str, str, object]] = []
        self._cancelled: set[str] = set()

    def note(self, lease: str, what: str, value) -> None:
        """`what`: 'placed' (node id, address, pid), 'progress' ([fraction, message]),
        'partial' (JSON text)."""
        self._notes.append((lease, what, value))

    def drain(self) -> list[tuple[str, str, object]]:
        notes, self._notes = self._notes, []
        return notes

    def cancel(self, lease: str) -> None:
        self._cancelled.add(lease)

    def cancelled(self, lease: str) -> bool:
        return lease in self._cancelled


class TaskContext(HandlerContext):
    """A handler's ctx inside a Ray task: reports go to the Reporter actor."""

    def __init__(self, job: Job, reporter):
        super().__init__(job)
        self._reporter = reporter

    @property
    def store(self):
        raise ExecutorError(
            f"{self.job.describe()} runs as a Ray task, which has no store; its kind must run in a local worker"
        )

    def _report(self, fraction: float, message: str) -> bool:
        self._reporter.note.remote(self.job.lease, "progress", [fraction, message])
        return self._still_ours()

    def _still_ours(self) -> bool:
        return not ray.get(self._reporter.cancelled.remote(self.job.lease))

    def _save_partial(self, result: dict) -> bool:
        # waited for, so that a crash right after it loses nothing
        ray.get(self._reporter.note.remote(self.job.lease, "partial", json.dumps(result)))
        return self._still_ours()


def job_text(job: Job) -> str:
    """The job as a task receives it."""
    return json.dumps(asdict(job))


@ray.remote(max_retries=0)  # a retry is the queue's business: it counts attempts and says why
def run_task(target: str, text: str, reporter) -> str:
    """Run the handler `target` on the job (`text`, as job_text writes it) and return the
    outcome (core.jobs.outcomes) as JSON text."""
    job = Job(**json.loads(text))
    runtime = ray.get_runtime_context()
    # waited for, so that even a task dying at once is known by where it ran
    ray.get(
        reporter.note.remote(job.lease, "placed", [runtime.get_node_id(), ray.util.get_node_ip_address(), os.getpid()])
    )
    outcome = run_handler(target, job, TaskContext(job, reporter))
    try:
        return json.dumps(outcome)
    except (TypeError, ValueError) as exc:
        return json.dumps(invalid_result(target, exc))
