"""Run as `python -m tests.core.full_disk FOLDER` inside a small file system of its own
(test_store_faults mounts one): a worker whose finished job's result meets a full disk, then
a reader of the store once the disk is full again. Prints what it saw as one JSON object."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
from pathlib import Path

from app.cli import main
from core.jobs.processes import pid_alive
from core.jobs.queue import DONE, JobQueue
from core.jobs.supervisor import Supervisor
from core.store import Store
from tests.core.job_kinds import TEST_HANDLERS

RESULT = 600_000  # characters: more than the space SQLite's files keep from earlier writes


def poll_until(supervisor: Supervisor, done, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "timed out"
        supervisor.poll()
        time.sleep(0.1)


def fill(filler: Path) -> None:
    with open(filler, "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:
            f.write(b"\0" * 4096)


def run(folder: Path) -> dict:
    path, filler = folder / "results.db", folder / "filler"
    with Store(path) as store:
        job_id = JobQueue(store).submit("fill", {"filler": str(filler), "size": RESULT})
    seen: dict = {}
    supervisor = Supervisor(path, workers=1, handlers=TEST_HANDLERS)
    supervisor.start()
    try:
        poll_until(supervisor, filler.exists)
        time.sleep(2)  # the worker has tried to write the result, and waits
        supervisor.poll()
        job = supervisor.queue.get(job_id)
        seen["while full"] = {"state": job.state, "worker alive": all(pid_alive(p) for p in supervisor.worker_pids)}
        filler.unlink()
        poll_until(supervisor, lambda: supervisor.queue.get(job_id).state == DONE)
        job = supervisor.queue.get(job_id)
        seen["after"] = {"attempts": job.attempts, "result": len(job.result["padding"])}
    finally:
        supervisor.stop()
    fill(filler)  # every connection closed: a reader must make the -shm file again
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        seen["results exit"] = main(["results", "--store", str(path)])
    seen["results said"] = err.getvalue()
    return seen


if __name__ == "__main__":
    print(json.dumps(run(Path(sys.argv[1]))))
