"""The job queue on a real store file, driven directly (no worker processes): claiming,
leases, results written with the job state, cancel, stale inputs, retries."""

import json
import time

import pytest

from core.jobs.context import JobContext
from core.jobs.errors import JobCancelled
from core.jobs.queue import CANCELLED, DONE, FAILED, QUEUED, RUNNING
from core.store import InvalidResult, StoreError


def test_claim_takes_the_oldest_job_of_a_known_kind_once(queue, conv2d):
    train = queue.submit("train", {})
    first = queue.submit("measure", {"bindings": {"C_in": 64}}, operator_id=conv2d)
    second = queue.submit("measure", {"bindings": {"C_in": 32}}, operator_id=conv2d)
    job = queue.claim(["measure"])
    assert (job.id, job.state, job.attempts, job.payload) == (first, RUNNING, 1, {"bindings": {"C_in": 64}})
    assert job.describe() == f"job {first} (measure conv2d)"
    assert job.lease and job.worker_pid > 0
    assert queue.claim(["measure"]).id == second
    assert queue.claim(["measure"]) is None
    assert queue.get(train).state == QUEUED


def test_complete_writes_measurement_and_state_together(store, queue, conv2d):
    device = store.add_device("this machine")
    job_id = queue.submit("measure", {"bindings": {"C_in": 64, "H": 56}}, operator_id=conv2d, device_id=device)
    job = queue.claim(["measure"])
    assert queue.complete(job, {"latency_ms": 1.5, "trials": [[0, 2.0], [1, 1.5]], "target": "llvm"})
    done = queue.get(job_id)
    assert (done.state, done.progress, done.result["latency_ms"]) == (DONE, 1.0, 1.5)
    [row] = store.results()
    assert (row["job_id"], row["device_name"], json.loads(row["bindings"])) == (
        job_id,
        "this machine",
        {"C_in": 64, "H": 56},
    )
    assert store.trials(row["measurement_id"]) == [(0, 2.0), (1, 1.5)]
    assert done.result["target"] == "llvm"  # details beyond the measurement stay on the job
    assert done.message == "1.5 ms"  # the job monitor's summary (no PyTorch time in this result)


def test_a_finished_job_says_what_it_found():
    from core.jobs.registry import read_result, result_summary

    def summary(kind: str, result: dict) -> str:
        return result_summary(kind, read_result(kind, result))

    measured = {"latency_ms": 0.03668, "speedup": 10.15}
    assert summary("measure", measured) == "0.03668 ms, 10.15x PyTorch"
    assert summary("transfer", {**measured, "transfer": {"found": 0, "applied": 0}}) == (
        "0.03668 ms, 10.15x PyTorch; no tuned schedule of its kernel class in the sources: TVM's default kept"
    )
    assert summary("transfer", {**measured, "transfer": {"found": 3, "applied": 2}, "tuned": True}).endswith(
        "2 of 3 tuned schedule(s) applied, kept the fastest"
    )
    assert summary("transfer", {**measured, "transfer": {"found": 3, "applied": 3}, "tuned": False}).endswith(
        "none beat TVM's default"
    )
    assert result_summary("sleep", {"slept": 1.0}) == "done"  # a kind with no summary of its own
    honest = {
        **measured,
        "max_abs_error": 3.1e-7,
        "schedule_source": "untuned (the tuned schedule ran slower: 0.05 ms)",
        "timing_note": "unreliable: PyTorch's runs spread by 120% of their median",
    }
    assert summary("measure", honest) == (
        "0.03668 ms, 10.15x PyTorch, max error 3.1e-07; untuned (the tuned schedule ran slower: 0.05 ms); "
        "unreliable: PyTorch's runs spread by 120% of their median"
    )


def test_invalid_result_writes_nothing(store, queue, conv2d):
    queue.submit("measure", {}, operator_id=conv2d)
    job = queue.claim(["measure"])
    with pytest.raises(InvalidResult, match="the measurement is missing field\\(s\\) 'latency_ms'"):
        queue.complete(job, {"latency_std_ms": 0.1})
    assert queue.get(job.id).state == RUNNING
    assert store.db["measurements"].count == 0


def test_a_cancelled_job_never_gets_its_result(store, queue, conv2d):
    job_id = queue.submit("measure", {}, operator_id=conv2d)
    job = queue.claim(["measure"])
    ctx = JobContext(queue, job, min_interval=0)
    ctx.progress(0.5, "compiling")
    assert queue.cancel(job_id)
    assert ctx.cancelled()
    with pytest.raises(JobCancelled, match=f"job {job_id} \\(measure conv2d\\) was cancelled"):
        ctx.progress(0.6, "still compiling")
    assert not queue.complete(job, {"latency_ms": 1.0})
    assert store.db["measurements"].count == 0
    cancelled = queue.get(job_id)
    assert (cancelled.state, cancelled.error, cancelled.progress) == (CANCELLED, "cancelled by the user", 0.5)
    assert not queue.cancel(job_id)  # already ended


def test_cancel_stale_drops_jobs_of_older_versions_only(store, queue, conv2d):
    key = "/home/me/ops/conv2d.json"
    old_running = queue.submit("measure", {}, operator_id=conv2d, input_key=key, input_version="v1")
    old_queued = queue.submit("measure", {}, operator_id=conv2d, input_key=key, input_version="v1")
    current = queue.submit("measure", {}, operator_id=conv2d, input_key=key, input_version="v2")
    elsewhere = queue.submit("measure", {}, operator_id=conv2d, input_key="other.json", input_version="v1")
    running = queue.claim(["measure"])
    assert running.id == old_running
    assert queue.cancel_stale(key, "v2") == [old_running, old_queued]
    assert [queue.get(j).state for j in (old_queued, old_running, current, elsewhere)] == [
        CANCELLED,
        CANCELLED,
        QUEUED,
        QUEUED,
    ]
    assert "superseded: /home/me/ops/conv2d.json changed" in queue.get(old_running).error
    assert not queue.complete(running, {"latency_ms": 1.0})  # it finished after the edit: dropped
    assert store.db["measurements"].count == 0


def test_abandoned_job_is_retried_until_its_attempts_run_out(queue):
    job_id = queue.submit("probe", {}, max_attempts=2)
    assert queue.abandon(queue.claim(["probe"]), "worker 1 was killed by signal SIGKILL") == QUEUED
    assert queue.get(job_id).error == "worker 1 was killed by signal SIGKILL"
    assert queue.abandon(queue.claim(["probe"]), "worker 2 was killed by signal SIGSEGV") == FAILED
    failed = queue.get(job_id)
    assert (failed.state, failed.attempts) == (FAILED, 2)
    assert failed.error == "worker 2 was killed by signal SIGSEGV; gave up after 2 attempt(s)"
    queue.retry(job_id)
    again = queue.claim(["probe"])
    assert (again.id, again.attempts, again.error) == (job_id, 1, None)
    # a job that finished meanwhile is left alone
    assert queue.complete(again, {"ok": True})
    assert queue.abandon(again, "late news") == DONE


def test_interrupted_job_does_not_use_up_an_attempt(queue):
    job_id = queue.submit("probe", {}, max_attempts=1)
    assert queue.abandon(queue.claim(["probe"]), "stopped", count_attempt=False) == QUEUED
    assert queue.get(job_id).attempts == 0


def test_partial_result_is_kept_for_the_next_attempt(queue):
    queue.submit("tune", {})
    job = queue.claim(["tune"])
    JobContext(queue, job).partial({"best_ms": 3.5, "trials_done": 64})
    queue.abandon(job, "worker died")
    retry = JobContext(queue, queue.claim(["tune"]))
    assert retry.previous_partial == {"best_ms": 3.5, "trials_done": 64}


def test_clear_errors(queue):
    with pytest.raises(StoreError, match="there is no job 99 in"):
        queue.cancel(99)
    job_id = queue.submit("probe", {})
    with pytest.raises(StoreError, match=f"job {job_id} \\(probe\\) is queued; only failed or cancelled"):
        queue.retry(job_id)
    with pytest.raises(StoreError, match="max_attempts must be at least 1"):
        queue.submit("probe", {}, max_attempts=0)


def test_a_running_job_estimates_the_time_left_at_its_pace(queue, conv2d):
    from core.jobs.queue import duration_text

    job_id = queue.submit("measure", {"operator": conv2d})
    job = queue.claim(["measure"])
    assert job.id == job_id and job.time_left(job.started + 60) is None  # no progress yet: no guess
    queue.report_progress(job, 0.25, "tuning")
    running = queue.get(job_id)
    assert running.time_left(running.started + 2) is None  # too early to tell
    assert running.time_left(running.started + 30) == pytest.approx(90.0)
    assert running.progress_text(running.started + 30) == "25%, ~1:30 left"
    assert duration_text(42) == "42 s" and duration_text(3723) == "1:02:03"


def test_a_job_taken_up_again_counts_only_its_running_time(queue, conv2d):
    job_id = queue.submit("measure", {"operator": conv2d})
    first = queue.claim(["measure"])
    queue.abandon(first, "the device did not answer")  # queued again for its next attempt
    assert queue.get(job_id).started is None  # the wait for a worker is no running time
    time.sleep(0.05)
    again = queue.claim(["measure"])
    assert again.attempts == 2 and again.started > first.started  # this attempt's start, as its progress
    queue.report_progress(again, 0.5, "measuring")
    assert queue.get(job_id).time_left(again.started + 60) == pytest.approx(60.0)
    queue.finish(again, FAILED, "gave up")
    queue.retry(job_id)
    assert queue.get(job_id).started is None  # a fresh start counts from its next claim
