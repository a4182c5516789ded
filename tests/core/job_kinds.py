"""Job handlers and isolated functions for the job-system tests.

Real functions that spawned worker processes import by 'module:function' path,
as they import the real handlers (core.compile.handlers:measure_job).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

import numpy as np

from core.data.conv_fit import Replacement
from core.store.errors import disk_full
from core.store.score import Score
from core.train.results import FisherResult

HERE = "tests.core.job_kinds"
#: kinds the tests register with workers, on top of (or instead of) the declared kinds (core.jobs.registry)
TEST_HANDLERS = {
    "sleep": f"{HERE}:sleep_job",
    "busy": f"{HERE}:busy_job",
    "abort": f"{HERE}:abort_job",
    "fail": f"{HERE}:fail_job",
    "listing": f"{HERE}:list_job",
    "resume": f"{HERE}:resume_job",
    "steps": f"{HERE}:resumable_steps_job",
    "measure": f"{HERE}:matmul_measure_job",
    "fisher": f"{HERE}:score_job",
    "spawn": f"{HERE}:child_process_job",
    "fill": f"{HERE}:fill_disk_job",
}


def sleep_job(payload: dict, ctx) -> dict:
    """Sleep in small steps, reporting progress (so a cancel stops it at the next step)."""
    steps = payload.get("steps", 10)
    for i in range(steps):
        time.sleep(payload.get("seconds", 1.0) / steps)
        ctx.progress((i + 1) / steps, f"step {i + 1} of {steps}")
    return {"slept": payload.get("seconds", 1.0)}


def busy_job(payload: dict, ctx) -> dict:
    """Busy-loop without ever looking at cancellation, like a long TVM build; the result is
    the loop's measured time in the store's measurement format."""
    start = time.perf_counter()
    while time.perf_counter() - start < payload.get("seconds", 1.0):
        pass
    return {"latency_ms": (time.perf_counter() - start) * 1e3}


def abort_job(payload: dict, ctx) -> dict:
    os.abort()


def fail_job(payload: dict, ctx) -> dict:
    raise ValueError(f"size {payload.get('size')} is not divisible by the group count")


def list_job(payload: dict, ctx) -> list:
    return [1, 2, 3]


def resume_job(payload: dict, ctx) -> dict:
    """Save a partial result, then die on the first attempt; a later attempt resumes from it."""
    if ctx.previous_partial is None:
        ctx.partial({"done_steps": 3})
        os.abort()
    return {"resumed_from": ctx.previous_partial["done_steps"], "total_steps": 6}


def resumable_steps_job(payload: dict, ctx) -> dict:
    """`steps` steps of `step_seconds`, saving how far it got after each, resuming from there."""
    first = (ctx.previous_partial or {}).get("done", 0)
    for i in range(first, payload["steps"]):
        time.sleep(payload["step_seconds"])
        ctx.partial({"done": i + 1})
        ctx.progress((i + 1) / payload["steps"], f"step {i + 1}")
    return {"resumed_from": first, "steps": payload["steps"]}


def matmul_measure_job(payload: dict, ctx) -> dict:
    """A real measurement (numpy matmul timed with perf_counter) in the store's measurement format."""
    n = payload["bindings"]["N"]
    a, b = np.ones((n, n), np.float32), np.ones((n, n), np.float32)
    times = []
    for i in range(payload.get("repeats", 5)):
        start = time.perf_counter()
        a @ b
        times.append((time.perf_counter() - start) * 1e3)
        ctx.progress((i + 1) / payload.get("repeats", 5), "timing")
    return {
        "latency_ms": float(np.median(times)),
        "latency_std_ms": float(np.std(times)),
        "flops": 2.0 * n**3,
        "trials": list(enumerate(times)),
        "tuned": False,
    }


def child_process_job(payload: dict, ctx) -> dict:
    """Start a busy child process, as TVM's builders are, say its pid, and wait for it."""
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    ctx.partial({"child": child.pid})
    child.wait()
    return {}


def stuck_in_c(pids: str, progress) -> None:
    """Start a child, write both pids to the file `pids`, then wait in C code that never runs
    Python's signal handlers (as LLVM building a large kernel does): SIGTERM blocked here."""
    progress(0.0, "building")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    with open(pids, "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    time.sleep(600)


def chatter(pids: str, progress) -> None:
    """Say something every 10 ms for a minute, SIGTERM only noted (as a tracker or RPC server
    serving until told to stop does); the own pid goes to the file `pids` first."""
    signal.signal(signal.SIGTERM, lambda *_: None)
    with open(pids, "w") as f:
        f.write(str(os.getpid()))
    for _ in range(6000):
        progress(0.0, "listening")
        time.sleep(0.01)


def fill_disk_job(payload: dict, ctx) -> dict:
    """Fill the disk with the file payload["filler"] (4 KiB at a time, until no more fits), then
    return a result of payload["size"] characters, larger than any space SQLite kept."""
    with open(payload["filler"], "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:
            f.write(b"\0" * 4096)
    ctx.progress(0.5, "the disk is full")  # dropped, not the job's failure
    return {"padding": "x" * payload["size"]}


def score_job(payload: dict, ctx) -> FisherResult:
    """The fisher kind's result for a Fisher Potential of payload["fp"] (the original's too)."""
    fp = payload["fp"]
    return FisherResult(Score("digits", "none", fisher_potential=fp), fp, fp, True, {}, {}, Replacement("op", 0, ()))


def echo_job(payload: dict, ctx) -> dict:
    """Return payload["result"] as the result, whatever it is."""
    return payload["result"]


# -- functions for core.jobs.isolate.call_in_subprocess ----------------------------------
def add(a: int, b: int) -> int:
    return a + b


def count_with_progress(n: int, progress) -> str:
    for i in range(n):
        progress((i + 1) / n, f"item {i + 1}")
    return "counted"


def raise_value_error(message: str) -> None:
    raise ValueError(message)


def segfault() -> None:
    ctypes.string_at(0)


def sleep_forever() -> None:
    time.sleep(3600)


def return_set() -> set:
    return {1, 2}


def full_store_job(payload: dict, ctx) -> dict:
    """Write a row of its own, as a search does, to a store whose disk is full."""
    raise disk_full(ctx.store.path, "database or disk is full")
