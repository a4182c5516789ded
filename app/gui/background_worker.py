"""Workers that outlive the window: quitting with jobs in flight may leave them to a `tessera
worker` process of its own session, which runs the queue empty and exits. Its output goes to
a log file beside the store, so what it did can be read afterwards."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from core.errors import TesseraError
from core.jobs.supervisor import default_worker_count

LOG_NAME = "tessera-worker.log"


class BackgroundWorkerError(TesseraError):
    """The background worker process could not be started."""


def worker_command(store: Path, workers: int) -> list[str]:
    """The command line of a worker that stops when no jobs are left: the frozen application is
    its own `tessera`; otherwise this interpreter runs the `tessera` entry point's function."""
    if getattr(sys, "frozen", False):
        program = [sys.executable]
    else:
        (entry,) = entry_points(group="console_scripts", name="tessera")
        module, _, function = entry.value.partition(":")
        program = [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())"]
    return [*program, "worker", "--n", str(workers), "--store", str(store)]


def start_background_worker(store: str | Path, workers: int | None = None) -> subprocess.Popen:
    """Start a detached worker on `store` (its own session: closing the window, or the terminal
    that started it, does not stop it); its output is appended to LOG_NAME beside the store."""
    store = Path(store)
    log = store.parent / LOG_NAME
    try:
        with open(log, "ab") as out:
            return subprocess.Popen(
                worker_command(store, workers or default_worker_count()),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=None if getattr(sys, "frozen", False) else Path(__file__).resolve().parents[2],  # the checkout
            )
    except OSError as e:
        raise BackgroundWorkerError(f"cannot start a background worker on {store}: {e.strerror or e}") from e
