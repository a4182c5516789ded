"""Worker processes end with everything they started and with the process that started
them: a SIGKILLed worker's children, the workers of a supervisor that crashed or exited
without stopping them. A crash uses up no attempt of the jobs it interrupted, and their
jobs are not shown running once their workers are gone."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.cli import main
from core.jobs.processes import pid_alive
from core.jobs.queue import QUEUED, RUNNING
from core.jobs.supervisor import Supervisor

from .job_kinds import TEST_HANDLERS
from .jobs_checks import poll_until, supervise_forever

REPO = Path(__file__).resolve().parents[2]


def wait_gone(pids, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while any(pid_alive(p) for p in pids):
        assert time.monotonic() < deadline, [p for p in pids if pid_alive(p)]
        time.sleep(0.05)


def child_of(queue, job_id: int) -> int | None:
    return (queue.get(job_id).result or {}).get("child")


def test_a_killed_worker_takes_its_children_with_it(store_path, queue):
    job_id = queue.submit("spawn", {})
    with Supervisor(store_path, workers=1, handlers=TEST_HANDLERS) as supervisor:
        poll_until(supervisor, lambda: child_of(queue, job_id), what="the child to start")
        worker, child = queue.get(job_id).worker_pid, child_of(queue, job_id)
        os.kill(worker, signal.SIGKILL)
        poll_until(supervisor, lambda: not pid_alive(child), timeout=2.0, what="the child to die")
        queue.cancel(job_id)  # the retry would run for ever


def test_a_crashed_supervisor_takes_its_workers_and_theirs_with_it(store_path, queue, capsys):
    job_id = queue.submit("spawn", {})
    controller = multiprocessing.get_context("spawn").Process(
        target=supervise_forever, args=(str(store_path), TEST_HANDLERS, 1)
    )
    controller.start()
    deadline = time.monotonic() + 30
    while not child_of(queue, job_id):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    worker, child = queue.get(job_id).worker_pid, child_of(queue, job_id)
    os.kill(controller.pid, signal.SIGKILL)
    controller.join()
    wait_gone([worker, child], 2.0)

    assert queue.get(job_id).state == RUNNING  # as the crash left it, until someone looks
    assert main(["jobs", "list", "--store", str(store_path)]) == 0
    out, err = capsys.readouterr()
    assert f"interrupted: worker {worker} is gone while running job {job_id} (spawn); queued again (attempt 1" in err
    job = queue.get(job_id)
    assert (job.state, job.attempts) == (QUEUED, 0)  # the crash used up no attempt
    assert out.splitlines()[1].split()[:4] == [str(job_id), "spawn", "queued", "0/3"]


def test_workers_end_when_their_supervisor_exits_without_stopping_them(store_path, queue):
    job_id = queue.submit("sleep", {"seconds": 600, "steps": 6000})
    script = "\n".join(
        [
            "import sys, time",
            "from core.jobs.supervisor import Supervisor",
            "from tests.core.job_kinds import TEST_HANDLERS",
            "s = Supervisor(sys.argv[1], workers=1, handlers=TEST_HANDLERS)",
            "s.start()",
            "while s.queue.get(int(sys.argv[2])).state != 'running':",
            "    s.poll(); time.sleep(0.05)",
            "print(s.worker_pids[0])",  # and exit without s.stop()
        ]
    )
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", script, str(store_path), str(job_id)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started < 30  # not waiting for the 10-minute job
    wait_gone([int(run.stdout)], 2.0)
    job = queue.get(job_id)
    assert (job.state, job.attempts) == (QUEUED, 0)
    assert job.error == f"interrupted: worker {run.stdout.strip()} was stopped"
