"""The job queue, persisted in the store's jobs table.

A job is queued -> running -> done | failed | cancelled. A worker claims a job
with one UPDATE ... RETURNING under BEGIN IMMEDIATE and gets a fresh lease;
every later write by that worker (progress, partial, result) checks the lease
and the state, so a job that was cancelled, superseded or handed to another
worker meanwhile is never overwritten by the old one.
"""

from __future__ import annotations

import json
import os
import socket
import time
import typing
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from core.store import Store, StoreError
from core.store.stored_values import stored_json

from .registry import record_result

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
STATES = (QUEUED, RUNNING, DONE, FAILED, CANCELLED)
HOST = socket.gethostname()
BASIS = 0.05  # progress below this says only that a job runs: it has no estimate of its time left yet
MIN_LEFT_S = 1.0  # the least time left shown while work remains


def time_left_at(ran: float, progress: float | None) -> float | None:
    """The seconds left that `progress`, reported after `ran` seconds of running, says: progress
    is the share of its expected running time a job has spent (measure and transfer jobs report
    it so, from what they measured of themselves: core.compile.phases; other handlers' share of
    their work stands in for it), so ran * (1 - p) / p is left, MIN_LEFT_S at least. None below
    BASIS (a handler with nothing to estimate from yet stays there) or in a job's first seconds."""
    if not progress or progress < BASIS or progress >= 1.0 or ran < 3:
        return None
    return max(ran * (1 - progress) / progress, MIN_LEFT_S)


_SELECT = (
    "SELECT jobs.*, operators.name AS operator_name FROM jobs LEFT JOIN operators ON operators.id = jobs.operator_id"
)


@dataclass(frozen=True)
class Job:
    """A jobs row as read at one moment (payload and result parsed from JSON)."""

    id: int
    kind: str
    payload: dict
    state: str
    attempts: int
    max_attempts: int
    operator_id: int | None
    operator_name: str | None
    device_id: int | None
    progress: float | None
    message: str | None
    error: str | None
    result: dict | None
    lease: str | None
    worker_host: str | None
    worker_pid: int | None
    heartbeat: float | None
    created: float | None
    started: float | None  # when its current (or last) attempt started: elapsed is running time
    finished: float | None
    input_key: str | None
    input_version: str | None
    runs_on: str | None  # where it runs (ran): "worker 812 on laptop", "Ray node 3f2a9c1b (10.0.0.5), worker 4121"

    @classmethod
    def from_row(cls, row: dict) -> Job:
        fields = {name: row[name] for name in cls.__dataclass_fields__}
        fields["payload"] = stored_json(row["payload"], "jobs", row["id"], "payload")
        fields["result"] = stored_json(row["result"], "jobs", row["id"], "result") if row["result"] else None
        return cls(**fields)

    def describe(self) -> str:
        """'job 7 (measure conv2d)', for messages."""
        what = " ".join(filter(None, (self.kind, self.operator_name)))
        return f"job {self.id} ({what})"

    def time_left(self, now: float) -> float | None:
        """Seconds left of this attempt at `now`, read from its progress (time_left_at); None
        while it has no estimate, and once it is no longer running. (core.jobs.countdown reads
        progress the same way for the window, counting down between reports.)"""
        if self.state != RUNNING or self.started is None:
            return None
        return time_left_at(now - self.started, self.progress)

    def progress_text(self, now: float) -> str:
        """'45%' or, with an estimate, '45%, ~0:40 left'."""
        text = f"{100 * (self.progress or 0):.0f}%"
        left = self.time_left(now)
        return text if left is None else f"{text}, ~{duration_text(left)} left"


def duration_text(seconds: float) -> str:
    """'42 s', '3:05', '1:02:03'."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class JobQueue:
    """Queue operations on a Store; one per process (or thread), like the Store itself."""

    def __init__(self, store: Store):
        self.store = store
        self.db = store.db

    # -- the people's side: submit, look, cancel, retry ----------------------------
    def submit(
        self,
        kind: str,
        payload: dict,
        *,
        operator_id: int | None = None,
        device_id: int | None = None,
        input_key: str | None = None,
        input_version: str | None = None,
        max_attempts: int = 3,
    ) -> int:
        """Queue a job; `input_key`/`input_version` name what it was computed from (e.g. an
        edited operator and its content hash) so cancel_stale can drop superseded jobs."""
        if max_attempts < 1:
            raise StoreError(f"max_attempts must be at least 1, got {max_attempts}")
        with self.store.write():
            jobs = self.db.table("jobs").insert(
                {
                    "kind": kind,
                    "payload": json.dumps(payload),
                    "state": QUEUED,
                    "operator_id": operator_id,
                    "device_id": device_id,
                    "input_key": input_key,
                    "input_version": input_version,
                    "attempts": 0,
                    "max_attempts": max_attempts,
                    "progress": 0.0,
                    "created": time.time(),
                }
            )
            return typing.cast(int, jobs.last_pk)

    def get(self, job_id: int) -> Job:
        for row in self.db.query(f"{_SELECT} WHERE jobs.id = ?", [job_id]):
            return Job.from_row(row)
        raise StoreError(f"there is no job {job_id} in {self.store.path}")

    def jobs(self, states: Sequence[str] = ()) -> list[Job]:
        """Jobs in these states (all if none given), oldest first."""
        where = f" WHERE jobs.state IN ({', '.join('?' * len(states))})" if states else ""
        return [Job.from_row(row) for row in self.db.query(f"{_SELECT}{where} ORDER BY jobs.id", list(states))]

    def cancel(self, job_id: int, reason: str = "cancelled by the user") -> bool:
        """Cancel a queued or running job (a running one stops at its next progress/cancel
        check; its result is never written). False if it had already finished."""
        with self.store.write():
            self.get(job_id)
            return (
                self._update(
                    {"state": CANCELLED, "error": reason, "finished": time.time()},
                    "id = ? AND state IN (?, ?)",
                    [job_id, QUEUED, RUNNING],
                )
                == 1
            )

    def cancel_stale(self, input_key: str, current_version: str) -> list[int]:
        """Cancel the queued and running jobs computed from an older version of `input_key`."""
        with self.store.write():
            rows = self.db.execute(
                "UPDATE jobs SET state = ?, error = ?, finished = ? WHERE input_key = ? "
                "AND input_version IS NOT ? AND state IN (?, ?) RETURNING id",
                [
                    CANCELLED,
                    f"superseded: {input_key} changed after this job was queued",
                    time.time(),
                    input_key,
                    current_version,
                    QUEUED,
                    RUNNING,
                ],
            ).fetchall()
        return sorted(r[0] for r in rows)

    def retry(self, job_id: int) -> None:
        """Queue a failed or cancelled job again, with a fresh budget of attempts."""
        with self.store.write():
            job = self.get(job_id)
            if job.state not in (FAILED, CANCELLED):
                raise StoreError(f"{job.describe()} is {job.state}; only failed or cancelled jobs can be retried")
            self._update(
                {
                    "state": QUEUED,
                    "attempts": 0,
                    "error": None,
                    "lease": None,
                    "started": None,  # a fresh start: its time counts from the next claim
                    "finished": None,
                    "progress": 0.0,
                    "message": None,
                },
                "id = ?",
                [job_id],
            )

    # -- the workers' side: claim, report, finish -----------------------------------
    def claim(self, kinds: Collection[str], runs_on: str | None = None) -> Job | None:
        """Take the oldest queued job of one of `kinds` for this process, or None. `runs_on`
        says where it will run (default: this process, "worker <pid> on <host>"). Its start is
        this attempt's (an interrupted attempt's progress starts again, and so does its time):
        a job's elapsed time is running time, never the wait for a worker."""
        kinds = list(kinds)
        marks = ", ".join("?" * len(kinds))
        waiting = f"SELECT id FROM jobs WHERE state = ? AND kind IN ({marks}) ORDER BY id LIMIT 1"
        if self.db.execute(waiting, [QUEUED, *kinds]).fetchone() is None:
            return None  # a read costs nothing; the write lock is taken only when there is work
        now = time.time()
        with self.store.write():
            claimed = self.db.execute(
                "UPDATE jobs SET state = ?, attempts = attempts + 1, lease = ?, worker_host = ?, "
                "worker_pid = ?, runs_on = ?, started = ?, heartbeat = ?, finished = NULL, "
                "progress = 0, "
                f"message = 'started' WHERE id = ({waiting}) RETURNING id",
                [
                    RUNNING,
                    uuid.uuid4().hex,
                    HOST,
                    os.getpid(),
                    runs_on or f"worker {os.getpid()} on {HOST}",
                    now,
                    now,
                    QUEUED,
                    *kinds,
                ],
            ).fetchall()
            return self.get(claimed[0][0]) if claimed else None

    def owns(self, job: Job) -> bool:
        """True while `job` (as claimed) is still running under its lease."""
        return (
            self.db.execute(
                "SELECT 1 FROM jobs WHERE id = ? AND lease = ? AND state = ?", [job.id, job.lease, RUNNING]
            ).fetchone()
            is not None
        )

    def place(self, job: Job, runs_on: str) -> bool:
        """Say where a claimed job runs, once known (a Ray task reports its node when it starts)."""
        return self._update_owned(job, {"runs_on": runs_on})

    def heartbeat(self, job: Job) -> bool:
        return self._update_owned(job, {"heartbeat": time.time()})

    def report_progress(self, job: Job, fraction: float, message: str) -> bool:
        return self._update_owned(job, {"progress": fraction, "message": message, "heartbeat": time.time()})

    def save_partial(self, job: Job, result: dict) -> bool:
        """Keep a partial result on the job row; a later attempt finds it in JobContext.previous_partial."""
        return self._update_owned(job, {"result": json.dumps(result), "heartbeat": time.time()})

    def complete(self, job: Job, result: dict) -> bool:
        """Write the result rows and mark the job done, in one transaction; False (nothing
        written) if the job was cancelled or taken away meanwhile. InvalidResult if malformed."""
        with self.store.write():
            if not self.owns(job):
                return False
            kept, message = record_result(self.store, job, result)
            return self._update_owned(
                job,
                {
                    "state": DONE,
                    "result": json.dumps(kept),
                    "progress": 1.0,
                    "message": message,
                    "error": None,
                    "finished": time.time(),
                },
            )

    def finish(self, job: Job, state: str, error: str) -> bool:
        """End a job this worker owns as FAILED or CANCELLED, with a reason."""
        return self._update_owned(job, {"state": state, "error": error, "finished": time.time()})

    # -- the supervisor's side ------------------------------------------------------------
    def abandon(self, job: Job, reason: str, count_attempt: bool = True) -> str:
        """The worker running `job` is gone: queue it again if attempts remain, else fail it.
        Returns the new state, or the current one if the job had already moved on."""
        with self.store.write():
            now = self.get(job.id)
            if now.state != RUNNING or now.lease != job.lease:
                return now.state
            attempts = now.attempts if count_attempt else now.attempts - 1
            fields: dict[str, object]
            if attempts < now.max_attempts:  # its time counts again from the next claim, as its progress does
                state, fields = QUEUED, {"error": reason, "message": "waiting for a retry", "started": None}
            else:
                state, fields = (
                    FAILED,
                    {"finished": time.time(), "error": f"{reason}; gave up after {attempts} attempt(s)"},
                )
            self._update({**fields, "state": state, "attempts": attempts, "lease": None}, "id = ?", [job.id])
            return state

    def ended_since(self, since: float) -> list[Job]:
        """Jobs that reached done, failed or cancelled after time `since`, in that order."""
        return [
            Job.from_row(row)
            for row in self.db.query(f"{_SELECT} WHERE jobs.finished > ? ORDER BY jobs.finished", [since])
        ]

    def has_work(self, kinds: Collection[str], worker_pids: Collection[int]) -> bool:
        """Queued jobs of `kinds`, or jobs running in one of `worker_pids` on this host."""
        kinds, pids = list(kinds), list(worker_pids)
        return (
            self.db.execute(
                f"SELECT 1 FROM jobs WHERE (state = ? AND kind IN ({', '.join('?' * len(kinds))})) "
                f"OR (state = ? AND worker_host = ? AND worker_pid IN ({', '.join('?' * len(pids))})) LIMIT 1",
                [QUEUED, *kinds, RUNNING, HOST, *pids],
            ).fetchone()
            is not None
        )

    # -- plumbing ------------------------------------------------------------------------
    def _update(self, fields: dict, where: str, args: Sequence) -> int:
        assignments = ", ".join(f"{name} = ?" for name in fields)
        with self.store.write():
            return self.db.execute(f"UPDATE jobs SET {assignments} WHERE {where}", [*fields.values(), *args]).rowcount

    def _update_owned(self, job: Job, fields: dict) -> bool:
        return self._update(fields, "id = ? AND lease = ? AND state = ?", [job.id, job.lease, RUNNING]) == 1
