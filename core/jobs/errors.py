"""Errors of the job system. Each message is written for a person and names the
job, worker or function at fault, so the CLI and GUI show it as-is."""

from __future__ import annotations

from core.errors import TesseraError


class TargetError(TesseraError):
    """A 'module:function' path does not name an importable function."""


class JobCancelled(Exception):
    """Raised inside a handler (by JobContext) to stop work on a cancelled or superseded job."""


class WorkerError(TesseraError):
    """The function run in a worker process raised; carries its type name and message.

    `remote_traceback` keeps the child's traceback for logs; it is not part of the message.
    """

    def __init__(self, message: str, type_name: str = "", remote_traceback: str = ""):
        super().__init__(message)
        self.type_name = type_name
        self.remote_traceback = remote_traceback


class WorkerCrashed(TesseraError):
    """A worker process died without an answer (signal, exit code) or was killed after a timeout."""

    def __init__(self, message: str, exitcode: int | None = None):
        super().__init__(message)
        self.exitcode = exitcode


class ExecutorError(TesseraError):
    """An executor cannot run: a bad setting, or its cluster cannot be reached."""


class PayloadError(TesseraError):
    """A job's payload does not fit its kind's contract (core.jobs.contract): an unknown or
    missing field, or a value of the wrong type; the message names the field."""
