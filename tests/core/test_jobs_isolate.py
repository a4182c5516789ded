"""core.jobs.isolate.call_in_subprocess: one function, one spawned process, JSON in and out."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.jobs.errors import WorkerCrashed, WorkerError
from core.jobs.isolate import call_in_subprocess
from core.jobs.processes import pid_alive

K = "tests.core.job_kinds"


def test_returns_result_from_another_process():
    assert call_in_subprocess(f"{K}:add", {"a": 2, "b": 40}) == 42


def test_streams_progress_while_running():
    seen = []
    result = call_in_subprocess(f"{K}:count_with_progress", {"n": 3}, on_progress=lambda f, m: seen.append((f, m)))
    assert result == "counted"
    assert seen == [(1 / 3, "item 1"), (2 / 3, "item 2"), (1.0, "item 3")]


def test_exception_becomes_worker_error_with_its_message():
    with pytest.raises(WorkerError, match="raise_value_error failed: ValueError: C_in=7 is odd") as info:
        call_in_subprocess(f"{K}:raise_value_error", {"message": "C_in=7 is odd"})
    assert info.value.type_name == "ValueError"
    assert "raise ValueError(message)" in info.value.remote_traceback


def test_segfault_becomes_worker_crashed_naming_the_signal():
    with pytest.raises(WorkerCrashed, match=r"running tests.core.job_kinds:segfault was killed by signal SIGSEGV"):
        call_in_subprocess(f"{K}:segfault", {})


def test_timeout_kills_the_process():
    with pytest.raises(WorkerCrashed, match="took longer than 0.5 s and was killed") as info:
        call_in_subprocess(f"{K}:sleep_forever", {}, timeout=0.5)
    assert info.value.exitcode == -9


@pytest.mark.parametrize(
    "target, kwargs, message",
    [
        (f"{K}:return_set", {}, "its result is not JSON"),
        (f"{K}:no_such_function", {}, "has no attribute 'no_such_function'"),
        ("no_such_module:f", {}, "cannot import 'no_such_module'"),
        ("not a path", {}, "is not a 'package.module:function' path"),
    ],
)
def test_bad_targets_and_results_are_clear_errors(target, kwargs, message):
    with pytest.raises(WorkerError, match=message):
        call_in_subprocess(target, kwargs)


def test_arguments_must_be_json():
    with pytest.raises(WorkerError, match="arguments for .* are not JSON"):
        call_in_subprocess(f"{K}:add", {"a": object(), "b": 1})


def test_no_process_is_left_behind():
    import psutil

    before = {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}
    call_in_subprocess(f"{K}:add", {"a": 1, "b": 1})
    with pytest.raises(WorkerCrashed):
        call_in_subprocess(f"{K}:sleep_forever", {}, timeout=0.3)
    after = {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}
    assert after <= before


@pytest.mark.parametrize(
    "target, pids",
    [("stuck_in_c", 2), ("chatter", 1)],
    ids=["in C code (LLVM building)", "still talking (device tracker, serve)"],
)
def test_a_child_ends_at_once_and_quietly_with_its_killed_caller(target, pids, tmp_path):
    """`timeout` SIGTERMs a command (`tessera export --format library`, `tessera device tracker`)
    whose child is in C code that runs no Python signal handler, or goes on talking to it: the
    child ends at once with what it started, without a BrokenPipeError traceback."""
    written = tmp_path / "pids"
    call = f"call_in_subprocess('{K}:{target}', {{'pids': {str(written)!r}}}, on_progress=print)"
    script = f"from core.jobs.isolate import call_in_subprocess; {call}"
    caller = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not written.exists() or len(written.read_text().split()) < pids:
        assert time.monotonic() < deadline and caller.poll() is None
        time.sleep(0.05)
    caller.terminate()
    _, err = caller.communicate(timeout=30)  # the child shares its stderr: read until it ends too
    started = [int(p) for p in written.read_text().split()]
    deadline = time.monotonic() + 2
    while any(pid_alive(p) for p in started):
        assert time.monotonic() < deadline, "the child outlived its caller"
        time.sleep(0.05)
    assert "Traceback" not in err, err
