"""The device list of a real store file (no TVM): descriptions validated with plain errors,
local first and always there, default device, health checks kept, removal that keeps
measurements sane; the `tessera device` commands that only touch the store; and a device
lost mid-job sending the job back to the queue (real supervisor and worker)."""

from __future__ import annotations

import pytest

from core.compile.health import check_call
from core.devices import (
    LOCAL,
    Device,
    DeviceError,
    add_device,
    default_device,
    get_device,
    list_devices,
    record_check,
    remove_device,
    set_default,
)
from core.jobs.queue import DONE, FAILED
from core.jobs.supervisor import Supervisor

from .rpc_loopback import HERE

TARGET = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72"}


def test_local_is_always_first_and_rpc_devices_keep_their_description(store):
    assert list_devices(store) == [LOCAL] and default_device(store).name == "local"
    rasp = add_device(store, "rasp4", "10.0.0.5:9190", "rasp4", TARGET, session_timeout=30, wait=5)
    gpu = add_device(store, "a100", "[::1]:9190", "a100", '{"kind": "cuda", "arch": "sm_80"}')
    assert [d.name for d in list_devices(store)] == ["local", "rasp4", "a100"]
    assert (rasp.tracker, rasp.key, rasp.target, rasp.session_timeout, rasp.wait) == (
        "10.0.0.5:9190",
        "rasp4",
        TARGET,
        30.0,
        5.0,
    )
    assert gpu.tracker_host == "::1" and gpu.target == {"kind": "cuda", "arch": "sm_80"}
    assert get_device(store, "rasp4") == rasp and Device.from_dict(rasp.to_dict()) == rasp
    assert rasp.job_fields() == {"device": "rasp4", "device_config": rasp.to_dict()}
    assert LOCAL.job_fields() == {"device": "local"}
    assert add_device(store, "plain", "127.0.0.1:9190", "k").target == {"kind": "llvm"}
    # the store's own rows: kind and config as documented, nothing else needed
    row = next(r for r in store.devices() if r["name"] == "rasp4")
    assert row["kind"] == "rpc" and row["config"]["tracker_port"] == 9190 and row["id"] == rasp.id


@pytest.mark.parametrize(
    "args, message",
    [
        (("bad name", "127.0.0.1:9190", "k"), "device name 'bad name' must be 1-63 letters"),
        (("../up", "127.0.0.1:9190", "k"), "device name '../up'"),
        (("local", "127.0.0.1:9190", "k"), "'local' is this machine's CPU"),
        (
            ("d", "127.0.0.1", "k"),
            "--tracker must be HOST:PORT such as 127.0.0.1:9190 or \\[::1\\]:9190, got '127.0.0.1'",
        ),
        (("d", "127.0.0.1:99999", "k"), "--tracker must be HOST:PORT"),
        (("d", "127.0.0.1:9190", "a:b"), "device d: the key 'a:b' must be"),
        (("d", "127.0.0.1:9190", "k", {"mcpu": "x"}), 'the target must be an object whose "kind" is one of llvm'),
        (("d", "127.0.0.1:9190", "k", "{llvm"), "the target must be JSON such as"),
        (("d", "127.0.0.1:9190", "k", {"kind": "llvm", "libs": {"a": 1}}), "target field 'libs'"),
    ],
)
def test_bad_descriptions_are_refused_plainly(store, args, message):
    with pytest.raises(DeviceError, match=message.replace("(", r"\(").replace("*", r"\*")):
        add_device(store, *args)
    assert [d.name for d in list_devices(store)] == ["local"]


def test_unknown_names_duplicates_and_timeouts(store):
    add_device(store, "rasp4", "10.0.0.5:9190", "rasp4")
    with pytest.raises(DeviceError, match="there is no device called 'rasp5' .* known devices: local, rasp4"):
        get_device(store, "rasp5")
    with pytest.raises(DeviceError, match=r"device rasp4 already exists \(key rasp4 at tracker 10.0.0.5:9190"):
        add_device(store, "rasp4", "10.0.0.6:9190", "rasp4")
    with pytest.raises(
        DeviceError, match="device r: wait must be a number of seconds above 0 and at most 604,800 .a week., got 0"
    ):
        add_device(store, "r", "10.0.0.5:9190", "rasp4", wait=0)
    moved = add_device(store, "rasp4", "10.0.0.6:9190", "rasp4", replace=True)
    assert moved.tracker == "10.0.0.6:9190" and moved.id == get_device(store, "rasp4").id


def test_default_device_and_last_check(store):
    add_device(store, "a", "127.0.0.1:9190", "a")
    add_device(store, "b", "127.0.0.1:9190", "b")
    assert set_default(store, "a").default and default_device(store).name == "a"
    set_default(store, "b")
    assert [d.name for d in list_devices(store) if d.default] == ["b"]
    check = {
        "reachable": True,
        "free": 2,
        "busy": 1,
        "pending": 0,
        "round_trip_ms": 12.5,
        "error": None,
        "checked": 1700000000.0,
    }
    assert record_check(store, "b", check).last_check == check
    assert add_device(store, "b", "127.0.0.1:9191", "b", replace=True).default  # replacing keeps the default
    assert get_device(store, "b").last_check is None  # a new description has not been checked
    set_default(store, "local")
    assert default_device(store) == LOCAL and not get_device(store, "b").default


def test_removing_keeps_measurements_and_refuses_local_and_busy_devices(store, queue, conv2d):
    rasp = add_device(store, "rasp4", "10.0.0.5:9190", "rasp4")
    set_default(store, "rasp4")
    store.add_measurement(conv2d, rasp.id, {"latency_ms": 2.0})
    job = queue.submit("measure", {"device": "rasp4"}, operator_id=conv2d, device_id=rasp.id)
    with pytest.raises(DeviceError, match=rf"device rasp4 has queued or running job\(s\) {job}; cancel them first"):
        remove_device(store, "rasp4")
    queue.cancel(job)
    with pytest.raises(DeviceError, match="the local CPU cannot be removed"):
        remove_device(store, "local")
    remove_device(store, "rasp4")
    assert [d.name for d in list_devices(store)] == ["local"] and default_device(store) == LOCAL
    with pytest.raises(DeviceError, match=r"no device called 'rasp4' \(it was removed\)"):
        get_device(store, "rasp4")
    [row] = [r for r in store.results() if r["measurement_id"]]
    assert row["device_name"] == "rasp4"  # the measurement still says where it ran
    again = add_device(store, "rasp4", "10.0.0.7:9190", "rasp4")
    assert again.id == rasp.id and not again.default  # the same row again: old results join the new entry


def test_health_check_answers_without_raising():
    assert check_call({"name": "local", "kind": "local"}, 5.0)["reachable"] is True
    answer = check_call({"name": "x", "kind": "rpc", "tracker_host": "127.0.0.1", "key": "k"}, 5.0)
    assert answer["reachable"] is False and answer["round_trip_ms"] is None
    assert answer["error"] == "device x: tracker port None must be a whole number from 1 to 65535"
    assert set(answer) == {"reachable", "free", "busy", "pending", "round_trip_ms", "error", "checked"}


def test_a_lost_device_sends_the_job_back_to_the_queue(store_path, queue, conv2d):
    handlers = {"measure": f"{HERE}:lost_once_job", "stuck": f"{HERE}:always_lost_job"}
    lost_once = queue.submit("measure", {}, operator_id=conv2d)
    always = queue.submit("stuck", {}, max_attempts=2)
    events = []
    Supervisor(store_path, workers=1, handlers=handlers).run(report=events.append)
    done = queue.get(lost_once)
    assert (done.state, done.attempts) == (DONE, 2) and done.result["latency_ms"] > 0
    failed = queue.get(always)
    assert (failed.state, failed.attempts) == (FAILED, 2)
    assert failed.error == (
        "SessionLost: device loop: lost the session with server 127.0.0.1:9 (key loopcpu) "
        "while timing; gave up after 2 attempt(s)"
    )
    assert any(f"job {always} (stuck) failed: SessionLost" in e for e in events)
