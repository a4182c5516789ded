"""The Ray executor on real local Ray instances (2 CPUs, no dashboard, loopback only), one
started by this module as a cluster to connect to and one started by a runner for itself,
with real stores: Fisher Potential and training jobs give the same scores as through
local workers; a Ray worker killed mid-job is retried with its partial result kept;
cancellation; jobs say where they run; no Ray process outlives its owner; a runner stops,
saying why, on a store damaged under it or read-only."""

import contextlib
import multiprocessing
import os
import re
import shutil
import signal
import tempfile
import time

import psutil
import pytest

from app.cli import main
from core.ir.serialize import read_document
from core.jobs.errors import ExecutorError
from core.jobs.executors import RayExecutor, Runner, choose_executor
from core.jobs.processes import STORE_REFUSED
from core.jobs.queue import CANCELLED, DONE, FAILED, HOST, QUEUED, RUNNING, JobQueue
from core.jobs.ray_runner import LOOPBACK_ONLY
from core.jobs.registry import TaskResources, handlers
from core.jobs.supervisor import Supervisor
from core.store import Store, StoreDamaged
from core.train.payloads import FisherPayload, TrainPayload
from tests.store_damage import build_store, damage_page
from tests.support import EXAMPLES

from .accuracy_settings import SHORT, TINY
from .job_kinds import HERE, TEST_HANDLERS
from .jobs_checks import poll_until

pytestmark = pytest.mark.slow
PLACED = re.compile(r"Ray node ([0-9a-f]{8}) \(127\.0\.0\.1\), worker (\d+)")
DECLARED = handlers()  # every declared kind's handler
EVERY_TEST_KIND = {kind: TaskResources() for kind in TEST_HANDLERS}


def ray_processes(since: float) -> set[int]:
    """Processes of any Ray instance started after `since` (epoch seconds) on this machine."""
    found = set()
    for proc in psutil.process_iter(["create_time", "name", "cmdline"]):
        text = " ".join([proc.info["name"] or "", *(proc.info["cmdline"] or [])])
        if proc.info["create_time"] >= since - 1 and re.search(r"\bray\b|raylet|gcs_server|ray::", text):
            found.add(proc.pid)
    return found


def wait_gone(pids: set[int], timeout: float = 20.0) -> set[int]:
    """The pids still running (not zombies) after waiting up to `timeout` s for them to end."""
    deadline = time.monotonic() + timeout
    while True:
        alive = {p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


@pytest.fixture(scope="module")
def ray_address():
    """A local Ray instance for the module; the runners connect to it as to a cluster."""
    started = time.time()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in LOOPBACK_ONLY.items():
            patch.setenv(name, value)
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        import ray

        temp = tempfile.mkdtemp(prefix="tray")  # short: Ray's socket paths must fit in 107 bytes
        ray.init(
            num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=temp, object_store_memory=100 * 2**20
        )
        try:
            address = ray.get_runtime_context().gcs_address
            assert address.startswith("127.0.0.1:"), f"Ray was imported before {LOOPBACK_ONLY} was set"
            yield address
        finally:
            ours = ray_processes(started)
            ray.shutdown()
    assert ours and not wait_gone(ours), "Ray processes outlived ray.shutdown()"
    shutil.rmtree(temp, ignore_errors=True)


def ray_supervisor(path, address, handlers=TEST_HANDLERS, **options) -> Supervisor:
    return Supervisor(path, handlers=handlers, ray=RayExecutor(address, resources=EVERY_TEST_KIND), **options)


def test_bad_settings_are_clear_errors():
    assert choose_executor("local") is None
    assert choose_executor("ray", "10.0.0.5:6379") == RayExecutor("10.0.0.5:6379")
    with pytest.raises(ExecutorError, match="unknown executor 'dask'; choose one of local, ray"):
        choose_executor("dask")
    with pytest.raises(ExecutorError, match="Ray address 'head-node' is not HOST:PORT"):
        RayExecutor("head-node")
    with pytest.raises(ExecutorError, match=r"a Ray address \(10.0.0.5:6379\) was given, but the executor is 'local'"):
        choose_executor("local", "10.0.0.5:6379")
    assert RayExecutor("[::1]:6379").loopback and not RayExecutor("10.0.0.5:6379").loopback
    assert RayExecutor().kinds(DECLARED) == {k: DECLARED[k] for k in ("fisher", "test", "train")}


def test_a_cluster_that_does_not_answer_is_a_clear_error(store_path, queue, capsys):
    job = queue.submit("fisher", {"operator": {}})
    supervisor = Supervisor(store_path, handlers={"fisher": DECLARED["fisher"]}, ray=RayExecutor("127.0.0.1:1"))
    events = supervisor.start()
    try:
        deadline = time.monotonic() + 30
        while not any("nothing answers" in e for e in events):
            assert time.monotonic() < deadline, events
            time.sleep(0.05)
            events += supervisor.poll()
    finally:
        events += supervisor.stop()
    assert any(
        e.startswith("nothing answers at the Ray cluster address 127.0.0.1:1: ")
        and "refused" in e
        and e.endswith("start its head with `ray start --head` there, or check the address")
        for e in events
    ), events
    assert queue.get(job).state == QUEUED
    assert main(["worker", "--address", "127.0.0.1:6379", "--store", str(store_path)]) == 1
    assert (
        "tessera worker: a Ray address (127.0.0.1:6379) was given, but the executor is 'local'"
        in capsys.readouterr().err
    )


def submit_batch(path) -> list[int]:
    """Two Fisher Potential jobs and a short training, on tiny networks."""
    with Store(path) as store:
        queue = JobQueue(store)
        ids = []
        for name in ("depthwise_separable", "shift_conv"):
            doc = read_document(EXAMPLES / f"{name}.json")
            ids.append(
                queue.submit("fisher", FisherPayload(doc, TINY).to_dict(), operator_id=store.add_operator(doc, name))
            )
        doc = read_document(EXAMPLES / "depthwise_separable.json")
        ids.append(
            queue.submit(
                "train",
                TrainPayload(doc, TINY, SHORT).to_dict(),
                operator_id=store.add_operator(doc, "depthwise_separable"),
            )
        )
    return ids


def stored(path, ids) -> tuple[list, list]:
    """The scores rows (without ids and times) and the jobs, in job order."""
    with Store(path) as store:
        jobs = [JobQueue(store).get(i) for i in ids]
        rows = [
            {k: v for k, v in row.items() if k not in ("id", "created")}
            for row in store.db["scores"].rows_where(order_by="job_id")
        ]
    return rows, jobs


def test_fisher_and_training_through_ray_match_local_workers(tmp_path, ray_address, capsys):
    """The same batch through local workers and, at the same time, through
    `tessera worker --executor ray --address ...`: the same scores."""
    local_path, ray_path = tmp_path / "local.db", tmp_path / "ray.db"
    ids = submit_batch(local_path)
    assert submit_batch(ray_path) == ids
    local = Supervisor(local_path, workers=1, handlers={k: DECLARED[k] for k in ("fisher", "train")})
    local.start()  # its worker runs the jobs by itself while the command below runs
    try:
        assert (
            main(["worker", "--executor", "ray", "--address", ray_address, "--n", "1", "--store", str(ray_path)]) == 0
        )
        poll_until(local, lambda: not local.busy(), timeout=120, what="the local workers")
    finally:
        local.stop()
    out = capsys.readouterr().out
    assert (
        f"runners: the Ray cluster at {ray_address} for fisher, test, train; "
        "1 local worker process for e2e, measure, search, transfer"
    ) in out
    assert re.search(rf"Ray runner \d+ is on the Ray cluster at {ray_address} \(2 CPUs\) for fisher, test, train", out)

    local_rows, local_jobs = stored(local_path, ids)
    ray_rows, ray_jobs = stored(ray_path, ids)
    assert [j.state for j in ray_jobs] == [DONE] * 3, [j.error for j in ray_jobs]
    assert all(f"{j.describe()} done" in out for j in ray_jobs)
    assert len(ray_rows) == 3 and ray_rows == local_rows  # the same scores, to the last bit
    assert ray_rows[2]["epochs"] == 1 and ray_rows[2]["accuracy"] is not None
    timeless = [
        [{k: v for k, v in j.result.items() if k != "seconds_per_epoch"} for j in jobs]
        for jobs in (ray_jobs, local_jobs)
    ]
    assert timeless[0] == timeless[1]
    for job in ray_jobs:  # where each ran: a node of the cluster; the runner holds the lease
        assert PLACED.fullmatch(job.runs_on), job.runs_on
        assert job.worker_host == HOST and job.worker_pid != int(PLACED.match(job.runs_on)[2])
    assert all(j.runs_on == f"worker {j.worker_pid} on {HOST}" for j in local_jobs)
    assert main(["jobs", "--store", str(ray_path)]) == 0  # the job list says where
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.split()[6] == "where"
    assert all(
        line.split()[:3] == [str(j.id), j.kind, "done"] and j.runs_on in line for line, j in zip(lines, ray_jobs)
    )


def test_killed_ray_worker_is_retried_with_nothing_lost(store_path, queue):
    """On a local Ray instance of the runner's own (no address), stopped with the runner,
    leaving no process behind."""
    started = time.time()
    steps = queue.submit("steps", {"steps": 15, "step_seconds": 0.15})
    resume = queue.submit("resume", {})  # kills its own worker (SIGABRT) the first time
    hopeless = queue.submit("abort", {}, max_attempts=1)
    failing = queue.submit("fail", {"size": 7})
    listing = queue.submit("listing", {})
    supervisor = Supervisor(store_path, handlers=TEST_HANDLERS, ray=RayExecutor(resources=EVERY_TEST_KIND))
    events = supervisor.start()
    try:
        events += poll_until(
            supervisor, lambda: (queue.get(steps).result or {}).get("done", 0) >= 3, timeout=60, what="three steps done"
        )
        node, victim = PLACED.fullmatch(queue.get(steps).runs_on).groups()
        os.kill(int(victim), signal.SIGKILL)
        events += poll_until(
            supervisor,
            lambda: all(queue.get(j).state in (DONE, FAILED) for j in (steps, resume, hopeless, failing, listing)),
            timeout=60,
            what="every job to end",
        )
        [runner] = supervisor.worker_pids
        instance = {p.pid for p in psutil.Process(runner).children(recursive=True)}
        assert instance & ray_processes(started)  # gcs_server, raylet, workers
    finally:
        events += supervisor.stop()
    assert any(e.startswith(f"Ray runner {runner} is on a local Ray instance (2 CPUs) for sleep,") for e in events)
    leaked = wait_gone(instance)
    assert not leaked, [psutil.Process(p).cmdline() for p in leaked if psutil.pid_exists(p)]
    job = queue.get(steps)
    assert (job.state, job.attempts) == (DONE, 2)
    assert job.result["resumed_from"] >= 3  # the second attempt went on from the first one's partial result
    assert int(PLACED.fullmatch(job.runs_on)[2]) != int(victim)
    assert any(
        f"Ray worker {victim} on node {node} (127.0.0.1) died while running job {steps} (steps); "
        f"queued again (attempt 2 of 3 next)" in e
        for e in events
    ), events
    resumed = queue.get(resume)
    assert (resumed.state, resumed.attempts, resumed.result) == (DONE, 2, {"resumed_from": 3, "total_steps": 6})
    gave_up = queue.get(hopeless)
    assert (gave_up.state, gave_up.attempts) == (FAILED, 1)
    assert re.fullmatch(
        rf"Ray worker \d+ on node {node} \(127\.0\.0\.1\) died while running job {hopeless} "
        r"\(abort\); gave up after 1 attempt\(s\)",
        gave_up.error,
    ), gave_up.error
    assert (queue.get(failing).state, queue.get(failing).attempts) == (FAILED, 1)  # an exception is not retried
    assert queue.get(failing).error == "ValueError: size 7 is not divisible by the group count"
    assert queue.get(listing).error == f"its handler {HERE}:list_job returned list, not a dict"


def poll_for(supervisor: Supervisor, text: str, timeout: float = 20.0) -> list[str]:
    """Poll the supervisor until one of its events contains `text`; returns the events."""
    events = []
    deadline = time.monotonic() + timeout
    while not any(text in e for e in events):
        assert time.monotonic() < deadline, f"no event with {text!r} in {timeout} s: {events}"
        time.sleep(0.05)
        events += supervisor.poll()
    return events


def test_cancel_stops_a_ray_task_or_kills_it_and_stop_requeues(store_path, store, queue, conv2d, ray_address):
    polite = queue.submit("sleep", {"seconds": 30, "steps": 300})
    stubborn = queue.submit("measure", {"seconds": 60}, operator_id=conv2d)  # never looks at ctx
    handlers = {"sleep": TEST_HANDLERS["sleep"], "measure": f"{HERE}:busy_job"}
    supervisor = ray_supervisor(store_path, ray_address, handlers, cancel_grace=0.5)
    events = supervisor.start()
    try:
        events += poll_until(
            supervisor,
            lambda: (queue.get(polite).progress or 0) > 0 and PLACED.fullmatch(queue.get(stubborn).runs_on or ""),
            what="both jobs to run",
        )
        busy_pid = int(PLACED.fullmatch(queue.get(stubborn).runs_on)[2])
        queue.cancel(polite)
        queue.cancel(stubborn)
        events += poll_for(
            supervisor,
            f"job {stubborn} (measure conv2d) was cancelled but its handler kept "
            f"running; stopped Ray worker {busy_pid} on node",
        )
        assert not wait_gone({busy_pid}, timeout=5)
        later = queue.submit("sleep", {"seconds": 0.2, "steps": 2})
        events += poll_until(supervisor, lambda: queue.get(later).state == DONE, what="a job after the cancels")
        interrupted = queue.submit("sleep", {"seconds": 30, "steps": 300})
        events += poll_until(supervisor, lambda: (queue.get(interrupted).progress or 0) > 0, what="the last job to run")
    finally:
        events += supervisor.stop()  # the last job is queued again, no attempt used up
    assert [queue.get(j).state for j in (polite, stubborn)] == [CANCELLED, CANCELLED]
    assert queue.get(polite).progress < 0.5
    assert store.db["measurements"].count == 0
    job = queue.get(interrupted)
    assert (job.state, job.attempts) == (QUEUED, 0) and job.error.startswith("interrupted: Ray runner ")
    interruptions = [e for e in events if "interrupted" in e]
    assert interruptions == [f"job {interrupted} (sleep) was interrupted and is queued again"], events
    assert RUNNING not in [j.state for j in queue.jobs()]


def test_a_runner_stops_writing_to_a_store_damaged_under_it(tmp_path, ray_address):
    path = tmp_path / "results.db"
    build_store(path, EXAMPLES)
    with Store(path) as store:
        job = JobQueue(store).submit("sleep", {"seconds": 1.0, "steps": 10})
    supervisor = ray_supervisor(path, ray_address)
    supervisor.start()
    [runner] = supervisor.worker_pids
    try:
        with Store(path, check=False) as store:
            poll_until(supervisor, lambda: PLACED.fullmatch(JobQueue(store).get(job).runs_on or ""), what="the job")
        damage_page(path, b"marker-00500")
        with pytest.raises(StoreDamaged, match=f"the results store {path} is damaged"):
            poll_for(supervisor, "never said: the runner refuses the store", timeout=30)
        assert not wait_gone({runner}, timeout=10)
    finally:
        supervisor.stop()
    with Store(path) as store:  # the job's outcome was written, then nothing more
        assert JobQueue(store).get(job).state == DONE


def test_a_runner_on_a_read_only_store_says_why_and_exits_refused(tmp_path, ray_address):
    """Started by itself (a supervisor refuses such a store before starting any runner)."""
    path = tmp_path / "results.db"
    build_store(path, EXAMPLES, rows=5)
    path.chmod(0o444)
    spawn = multiprocessing.get_context("spawn")
    notes, sender = spawn.Pipe(duplex=False)
    given = Runner(str(path), dict(TEST_HANDLERS), spawn.Event(), spawn.Value("q", 0, lock=False), 1.0, 1.0, sender)
    target, args = RayExecutor(ray_address, resources=EVERY_TEST_KIND).runner(given)
    process = spawn.Process(target=target, args=args)
    process.start()
    sender.close()
    process.join(60)
    said = []
    with contextlib.suppress(EOFError):  # the runner's end is closed once it has exited
        while notes.poll():
            said.append(notes.recv())
    assert process.exitcode == STORE_REFUSED, said
    assert said == [
        f"Ray runner {process.pid} stopped: the results store {path} is read-only (the file is read-only): "
        "it can be read but not changed; make it writable, or copy it to a writable folder and use --store"
    ]
