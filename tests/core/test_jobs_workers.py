"""Real spawned workers under a real supervisor: results, progress, handler errors,
crashes and retries, cancellation (cooperative or not), stale inputs, restart after
the controlling process crashed (no attempt used), and workers of other processes that went silent."""

import multiprocessing
import os
import signal
import time

from core.jobs.processes import pid_alive
from core.jobs.queue import CANCELLED, DONE, FAILED, QUEUED, RUNNING
from core.jobs.supervisor import Supervisor

from .job_kinds import HERE, TEST_HANDLERS
from .jobs_checks import check_worker_killed_mid_job, poll_until, supervise_forever


def test_workers_run_a_batch_to_the_end(store_path, store, queue, conv2d):
    measure = queue.submit("measure", {"bindings": {"N": 64}, "repeats": 5}, operator_id=conv2d)
    score = queue.submit("fisher", {"fp": 3.5}, operator_id=conv2d)
    sleeps = [queue.submit("sleep", {"seconds": 0.3, "steps": 3}) for _ in range(3)]
    fail = queue.submit("fail", {"size": 7})
    listing = queue.submit("listing", {})
    resume = queue.submit("resume", {})
    events = []
    Supervisor(store_path, workers=2, handlers=TEST_HANDLERS).run(report=events.append)

    assert all(queue.get(j).state == DONE for j in [measure, score, *sleeps, resume])
    assert all(queue.get(j).progress == 1.0 and queue.get(j).message == "done" for j in sleeps)
    [row] = store.results()
    assert row["job_id"] == measure and row["latency_ms"] > 0 and row["flops"] == 2 * 64**3
    assert row["fisher_potential"] == 3.5 and len(store.trials(row["measurement_id"])) == 5
    failed = queue.get(fail)
    assert (failed.state, failed.attempts) == (FAILED, 1)  # an exception is not retried
    assert failed.error == "ValueError: size 7 is not divisible by the group count"
    assert queue.get(listing).error == f"its handler {HERE}:list_job returned list, not a dict"
    assert f"job {fail} (fail) failed: ValueError: size 7" in "\n".join(events)
    resumed = queue.get(resume)  # died (SIGABRT) after saving a partial; the retry resumed from it
    assert (resumed.attempts, resumed.result) == (2, {"resumed_from": 3, "total_steps": 6})
    assert any(f"was killed by signal SIGABRT while running job {resume} (resume)" in e for e in events)


def test_sigkill_of_a_worker_mid_job_is_reported_and_retried(store_path, queue):
    job, _ = check_worker_killed_mid_job(store_path, queue.submit("busy", {"seconds": 1.0}), TEST_HANDLERS)
    assert job.result["latency_ms"] >= 1000


def test_a_job_that_always_crashes_fails_after_its_attempts(store_path, queue):
    job_id = queue.submit("abort", {}, max_attempts=2)
    later = queue.submit("sleep", {"seconds": 0.1, "steps": 1})
    events = []
    Supervisor(store_path, workers=1, handlers=TEST_HANDLERS).run(report=events.append)
    job = queue.get(job_id)
    assert (job.state, job.attempts) == (FAILED, 2)
    assert job.error.startswith("worker ") and job.error.endswith(
        f"was killed by signal SIGABRT while running job {job_id} (abort); gave up after 2 attempt(s)"
    )
    assert queue.get(later).state == DONE  # the others carry on


def test_cancel_stops_a_cooperative_job_and_frees_its_worker(store_path, queue):
    long_job = queue.submit("sleep", {"seconds": 30, "steps": 300})
    next_job = queue.submit("sleep", {"seconds": 0.1, "steps": 1})
    with Supervisor(store_path, workers=1, handlers=TEST_HANDLERS) as supervisor:
        poll_until(supervisor, lambda: (queue.get(long_job).progress or 0) > 0, what="progress")
        pid = queue.get(long_job).worker_pid
        queue.cancel(long_job)
        poll_until(supervisor, lambda: queue.get(next_job).state == DONE, timeout=10, what="the next job")
        assert queue.get(next_job).worker_pid == pid  # the same worker, not a replacement
    assert queue.get(long_job).state == CANCELLED


def test_cancel_kills_a_worker_whose_handler_ignores_it(store_path, store, queue, conv2d):
    stuck = queue.submit("measure", {"seconds": 60}, operator_id=conv2d)
    handlers = {"measure": f"{HERE}:busy_job"}
    with Supervisor(store_path, workers=1, handlers=handlers, cancel_grace=0.5) as supervisor:
        poll_until(supervisor, lambda: queue.get(stuck).state == RUNNING, what="the job to run")
        pid = queue.get(stuck).worker_pid
        queue.cancel(stuck)
        events = poll_until(supervisor, lambda: pid not in supervisor.worker_pids, timeout=10)
        assert any(
            f"job {stuck} (measure conv2d) was cancelled but its handler kept running; stopped worker {pid}" in e
            for e in events
        )
        poll_until(supervisor, lambda: len(supervisor.worker_pids) == 1, what="a replacement worker")
    assert queue.get(stuck).state == CANCELLED
    assert store.db["measurements"].count == 0


def test_stale_job_finishing_after_the_edit_writes_nothing(store_path, store, queue, conv2d):
    key = "/home/me/operators/conv2d.json"
    old = queue.submit("measure", {"seconds": 1.0}, operator_id=conv2d, input_key=key, input_version="hash-1")
    handlers = {"measure": f"{HERE}:busy_job"}  # never checks for cancellation
    with Supervisor(store_path, workers=1, handlers=handlers, cancel_grace=60) as supervisor:
        poll_until(supervisor, lambda: queue.get(old).state == RUNNING, what="the job to run")
        assert queue.cancel_stale(key, "hash-2") == [old]
        poll_until(supervisor, lambda: not supervisor.busy(), what="the worker to finish the job")
    job = queue.get(old)
    assert (job.state, job.result) == (CANCELLED, None)
    assert job.error == f"superseded: {key} changed after this job was queued"
    assert store.db["measurements"].count == 0


def test_restart_after_the_controlling_process_crashed(store_path, queue):
    quick = [queue.submit("sleep", {"seconds": 0.1, "steps": 1}) for _ in range(2)]
    lost, orphaned = [queue.submit("steps", {"steps": 12, "step_seconds": 0.1}) for _ in range(2)]
    controller = multiprocessing.get_context("spawn").Process(
        target=supervise_forever, args=(str(store_path), TEST_HANDLERS, 2)
    )
    controller.start()
    deadline = time.monotonic() + 30
    while not (
        all(queue.get(j).state == DONE for j in quick)
        and all((queue.get(j).result or {}).get("done", 0) >= 3 for j in (lost, orphaned))
    ):
        assert time.monotonic() < deadline, [queue.get(j) for j in (*quick, lost, orphaned)]
        time.sleep(0.05)
    finished = {j: queue.get(j) for j in quick}
    workers = {j: queue.get(j).worker_pid for j in (lost, orphaned)}
    os.kill(controller.pid, signal.SIGKILL)
    os.kill(workers[lost], signal.SIGKILL)  # the crash took one worker down; the other ends with its parent
    controller.join()
    deadline = time.monotonic() + 2
    while pid_alive(workers[orphaned]):
        assert time.monotonic() < deadline, "a worker outlived the process that started it"
        time.sleep(0.05)

    events = []
    Supervisor(store_path, workers=2, handlers=TEST_HANDLERS).run(report=events.append)
    for job_id, worker in workers.items():
        interrupted = f"interrupted: worker {worker} is gone while running job {job_id} (steps)"
        assert any(interrupted in e for e in events), events
        job = queue.get(job_id)
        assert (job.state, job.attempts) == (DONE, 1)  # the crash used up no attempt
        assert job.result["resumed_from"] >= 3  # picked up where its partial result left off
    assert {j: queue.get(j) for j in quick} == finished  # finished results untouched


def test_silent_worker_of_another_process_is_taken_back(store_path, store, queue):
    silent = queue.submit("probe", {})
    dead = queue.submit("probe", {})
    claimed = [queue.claim(["probe"]), queue.claim(["probe"])]
    gone = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(0,))
    gone.start()
    gone.join()
    # as another machine's worker that went quiet, and a local worker whose process is gone
    with store.write():
        store.db["jobs"].update(silent, {"worker_host": "render-box", "heartbeat": time.time() - 300})
        store.db["jobs"].update(dead, {"worker_pid": gone.pid})
    supervisor = Supervisor(store_path, workers=1, handlers={"other": f"{HERE}:sleep_job"}, stale_after=60)
    events = supervisor.start()
    supervisor.stop()
    assert any(
        f"worker render-box:{os.getpid()} sent no heartbeat for 300 s while running job {silent} (probe)" in e
        for e in events
    ), events
    assert any(f"interrupted: worker {gone.pid} is gone while running job {dead} (probe)" in e for e in events), events
    assert [queue.get(j).state for j in (silent, dead)] == [QUEUED, QUEUED]
    assert all(not queue.owns(job) for job in claimed)
