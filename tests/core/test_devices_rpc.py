"""A real tracker and two real RPC servers on 127.0.0.1 (`tessera device tracker|serve`
processes, stopped by process id with their children when the module ends): health checks,
the plain errors (dead tracker, unknown key, every server busy, a session lost mid-run),
measuring an operator there from `tessera measure`, submitting for it with `tessera submit`,
and last (it kills a server) tuning through them with a server killed mid-job.
Loopback only: no test here may name any other address."""

from __future__ import annotations

import json
import signal
import socket

import pytest

from app.cli.tune import _transfer_report
from core.compile.health import check_call
from core.devices import Device, DeviceError, DeviceUnavailable, SessionLost, add_device, get_device
from core.devices.session import open_session
from core.errors import TesseraError
from core.jobs.queue import DONE, QUEUED, RUNNING, JobQueue
from core.jobs.supervisor import Supervisor
from core.store import Store
from tests.support import EXAMPLES, TINY
from tests.support import tessera as run_tessera

from .jobs_checks import poll_until
from .rpc_loopback import LOOPBACK, free_port, key_status, sessions, stop, tessera, wait_for

pytestmark = pytest.mark.tvm

CONV = EXAMPLES / "conv2d.json"
SMALL = "C_in=4,C_out=4,H=8,W=8,K=3"


def test_gpu_devices_are_refused_before_any_work():
    """No tracker is asked: untuned kernels, and the untuned default transfer-tuning may keep,
    do not run on a GPU."""
    from core.compile.errors import CompileError
    from core.compile.handlers import _CallContext, measure_job, transfer_job

    gpu = Device.from_dict(
        {
            "name": "gpu",
            "kind": "rpc",
            "tracker_host": LOOPBACK,
            "tracker_port": free_port(),
            "key": "gpu",
            "target": {"kind": "cuda"},
        }
    )
    payload = {"operator": json.loads(CONV.read_text()), "bindings": TINY, **gpu.job_fields()}
    with pytest.raises(CompileError, match=r"^device gpu is a GPU \(cuda\): untuned kernels do not run there"):
        measure_job(payload, _CallContext(None))
    with pytest.raises(CompileError, match=r"^transfer-tuning runs on CPU devices \(an llvm target\); gpu is cuda"):
        transfer_job(payload, _CallContext(None))


def test_health_check_counts_servers_and_times_a_round_trip(rpc_cluster):
    answer = check_call(rpc_cluster.device(), 30.0)
    assert answer["error"] is None and answer["reachable"] is True
    assert (answer["free"], answer["busy"], answer["pending"]) == (2, 0, 0)
    assert answer["round_trip_ms"] > 0


def test_plain_errors_for_a_dead_tracker_an_unknown_key_and_busy_servers(rpc_cluster):
    dead = free_port()
    answer = check_call(rpc_cluster.device(tracker_port=dead), 10.0)
    assert answer["reachable"] is False and answer["error"] == f"tracker 127.0.0.1:{dead} refused the connection"
    with pytest.raises(DeviceUnavailable, match=rf"^tracker 127.0.0.1:{dead} refused the connection$"):
        open_session(Device.from_dict(rpc_cluster.device(tracker_port=dead)), wait=1.5)

    answer = check_call(rpc_cluster.device(key="nokey"), 10.0)
    assert (
        answer["reachable"] is True
        and answer["free"] == 0
        and answer["error"].startswith(
            f"tracker {rpc_cluster.address} has no server with key nokey (keys with servers there: loopcpu)"
        )
    )

    device = Device.from_dict(rpc_cluster.device())
    held = [open_session(device, wait=10.0) for _ in range(2)]
    assert len({s.server for s in held}) == 2  # one session on each server
    with pytest.raises(DeviceUnavailable, match=r"^no free device for key loopcpu after 1 s \(2 busy\)$"):
        open_session(device, wait=1.0)
    del held
    wait_for(lambda: key_status(rpc_cluster.port, "loopcpu").free == 2, 30, "the servers to be free again")


def test_a_session_lost_mid_run_is_named_plainly(rpc_cluster):
    session = open_session(Device.from_dict(rpc_cluster.device()), wait=10.0)
    server = wait_for(rpc_cluster.busy_server, 10, "the session's process")
    for process in sessions(server):  # the session process: TVM's listener thread dies with it
        process.kill()
    with pytest.raises(RuntimeError) as raised:
        session.remote.get_function("runtime.NumThreads")()
    error = session.translate(raised.value, "timing the kernel")
    assert isinstance(error, SessionLost) and error.retryable
    assert str(error) == (
        f"device loop: lost the session with server {session.server} (key loopcpu) while "
        f"timing the kernel: the server died, restarted or dropped the connection"
    )
    # `tessera device serve` notices its server is gone from the tracker and starts it again
    wait_for(lambda: key_status(rpc_cluster.port, "loopcpu").free == 2, 90, "the server to be back")


def test_check_measure_and_submit_from_the_command_line(rpc_cluster, tmp_path):
    store = ["--store", str(tmp_path / "results.db")]
    added = run_tessera("device", "add", "loop", "--tracker", rpc_cluster.address, "--key", "loopcpu", *store)
    assert added.returncode == 0, added.stderr
    checked = run_tessera("device", "check", "loop", *store)
    assert checked.returncode == 0, checked.stderr
    assert (
        "loop (key loopcpu at tracker" in checked.stdout
        and ": ok: 2 free, 0 busy, 0 waiting; round trip" in checked.stdout
    )

    measured = run_tessera(
        "measure",
        str(CONV),
        "--bind",
        SMALL,
        "--repeat",
        "3",
        "--min-repeat-ms",
        "5",
        "--device",
        "loop",
        "--json",
        *store,
    )
    assert measured.returncode == 0, measured.stderr
    result = json.loads(measured.stdout)
    assert result["latency_ms"] > 0 and result["max_abs_error"] < 1e-4 and result["torch_latency_ms"] is None
    assert '"num-cores":1' in result["target"]  # the servers run one thread (serve --threads 1)

    submitted = run_tessera("submit", str(CONV), "--bind", SMALL, "--device", "loop", *store)
    assert submitted.returncode == 0 and "on device loop" in submitted.stdout, submitted.stderr
    with Store(tmp_path / "results.db") as opened:  # a worker runs it: see the last test
        [job] = JobQueue(opened).jobs()
        device = get_device(opened, "loop")
    assert job.device_id == device.id and job.payload["device_config"] == device.to_dict()
    listed = run_tessera("device", "list", *store).stdout
    assert "ok: 2 free, 0 busy, 0 waiting; round trip" in listed


def test_serving_refuses_plainly_and_announces_itself(rpc_cluster):
    from core.devices.serving import run_server, run_tracker

    dead = free_port()
    with pytest.raises(DeviceUnavailable, match=rf"^tracker 127.0.0.1:{dead} refused the connection$"):
        run_server(f"{LOOPBACK}:{dead}", "k", LOOPBACK, None, 1)
    with pytest.raises(
        DeviceError, match=rf"^cannot listen on 127.0.0.1:{rpc_cluster.port}: .* \(choose another --port\)"
    ):
        run_tracker(LOOPBACK, rpc_cluster.port)
    assert f"tracker listening on 127.0.0.1:{rpc_cluster.port}" in (rpc_cluster.folder / "tracker.log").read_text()
    logs = [log.read_text() for log in rpc_cluster.folder.glob("server-*.log")]
    assert len(logs) == 2 and all("server for key loopcpu listening on 127.0.0.1:" in log for log in logs)


@pytest.mark.slow
def test_transfer_tuning_on_a_device_checks_and_times_every_candidate_there(rpc_cluster, tmp_path):
    """Schedules tuned here (conv2d at TINY sizes, 2 trials) reused on the RPC device at other
    sizes: each candidate is built for the device's target, checked and timed on a server;
    torch, which would run here, is not timed. A GPU device is refused before any work."""
    from core.jobs.isolate import call_in_subprocess

    document, root = json.loads(CONV.read_text()), tmp_path / "tuning"
    tuned = call_in_subprocess(
        "core.compile.handlers:measure_call",
        {
            "payload": {
                "operator": document,
                "bindings": TINY,
                "tune_trials": 2,
                "cost_model": "random",
                "device": "local",
                "tuning_root": str(root),
                "repeat": 3,
                "min_repeat_ms": 5,
            }
        },
    )
    assert tuned["trial_count"] == 2  # the schedules the device reuses
    store = tmp_path / "results.db"
    with Store(store) as opened:
        add_device(opened, "loop", rpc_cluster.address, "loopcpu")
    out = run_tessera(
        "tune",
        str(CONV),
        "--bind",
        "C_in=4,C_out=6,H=10,W=8",
        "--transfer",
        "--from",
        str(root),
        "--top-k",
        "2",
        "--device",
        "loop",
        "--store",
        str(store),
        "--repeat",
        "3",
        "--min-repeat-ms",
        "20",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    transfer = result["transfer"]
    assert transfer["found"] >= 1 and transfer["applied"] == transfer["found"] and transfer["skipped"] == 0
    assert result["max_abs_error"] < 1e-4 and result["latency_ms"] > 0
    assert result["torch_latency_ms"] is None and result["speedup"] is None
    assert '"num-cores":1' in result["target"]  # the servers' thread count (serve --threads 1)
    assert "(on the device; PyTorch is not timed there)" in _transfer_report("conv2d.json", result)
    with Store(store) as opened:
        [row] = [r for r in opened.results() if r["measurement_id"]]
    assert row["device_name"] == "loop" and row["schedule_source"] == result["schedule_source"]
    gpu = Device.from_dict(rpc_cluster.device(name="gpu", target={"kind": "cuda"}))
    payload = {"operator": document, "bindings": TINY, **gpu.job_fields()}
    with pytest.raises(TesseraError, match=r"transfer-tuning runs on CPU devices \(an llvm target\); gpu is cuda"):
        call_in_subprocess("core.compile.handlers:transfer_call", {"payload": payload})


@pytest.mark.slow
def test_a_tuning_job_survives_a_server_killed_mid_measurement(rpc_cluster, tmp_path):
    """Tune (2 trials through MetaSchedule's RPC runner), then kill the server timing the
    kernel: the job goes back to the queue, the next attempt gets the other server from the
    tracker, finds its trials in the tuning database and completes; nothing is lost."""
    store_path, document = tmp_path / "results.db", json.loads(CONV.read_text())
    with Store(store_path) as store:
        device = add_device(store, "loop", rpc_cluster.address, "loopcpu")
        operator = store.add_operator(document, "conv2d")
        payload = {
            "operator": document,
            "bindings": TINY,
            "tune_trials": 2,
            "cost_model": "random",
            "tuning_root": str(tmp_path / "tuning"),
            "repeat": 5,
            "min_repeat_ms": 400,
            **device.job_fields(),
        }
        queue = JobQueue(store)
        job_id = queue.submit("measure", payload, operator_id=operator, device_id=device.id)
        with Supervisor(store_path, workers=1) as supervisor:
            poll_until(
                supervisor,
                lambda: (
                    (queue.get(job_id).message or "").startswith(("building the tuned", "timing"))
                    and rpc_cluster.busy_server()
                ),
                timeout=400,
                what="the tuned kernel to run on a server",
            )
            victim = rpc_cluster.busy_server()
            records = sorted((tmp_path / "tuning" / "loop").glob("*/database_tuning_record.json"))
            trials_before = records[0].read_text().splitlines()
            assert stop(victim, signal.SIGKILL, grace=0)  # a dead server: its whole tree at once
            poll_until(
                supervisor, lambda: queue.get(job_id).state not in (QUEUED, RUNNING), timeout=300, what="the job to end"
            )
        job = queue.get(job_id)
        assert (job.state, job.attempts) == (DONE, 2), job.error
        assert len(trials_before) == 2 and records[0].read_text().splitlines() == trials_before
        assert (
            job.result["tuned"] == (job.result["schedule_source"] == "tuned")
            and job.result["new_trials"] == 0
            and job.result["trial_count"] == 2
        )
        [row] = [r for r in store.results() if r["measurement_id"]]
        assert row["device_name"] == "loop" and row["job_id"] == job_id and row["tuned"] == job.result["tuned"]
        assert len(store.trials(row["measurement_id"])) == len(job.result["trials"]) >= 1
    assert key_status(rpc_cluster.port, "loopcpu").servers == 1


def test_a_killed_tracker_or_server_leaves_no_port_listening(rpc_cluster):
    """SIGKILL of `tessera device serve` or `tracker` (no chance to clean up) still ends TVM's
    listener: it runs in a child whose process group dies with the command."""
    server = rpc_cluster.serve()
    port = int(server.args[server.args.index("--port") + 1])
    wait_for(lambda: _listening(port), 60, "the server's listener", server)
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=10)
    wait_for(lambda: not _listening(port), 20, f"port {port} to close")

    tracker_port = free_port()
    log = rpc_cluster.folder / "second-tracker.log"
    tracker = tessera("device", "tracker", "--host", LOOPBACK, "--port", str(tracker_port), log=log)
    wait_for(lambda: _listening(tracker_port), 60, "the second tracker", tracker)
    tracker.send_signal(signal.SIGKILL)
    tracker.wait(timeout=10)
    wait_for(lambda: not _listening(tracker_port), 20, f"port {tracker_port} to close")


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((LOOPBACK, port)) == 0
