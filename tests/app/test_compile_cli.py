"""`tessera measure` and `tessera codegen` as a user runs them (real subprocesses that
spawn the TVM worker), and a measuring process killed with SIGKILL coming back as a clean error."""

from __future__ import annotations

import json
import os
import re
import signal

import psutil
import pytest

from core.jobs.errors import WorkerCrashed
from core.jobs.isolate import call_in_subprocess
from tests.support import EXAMPLES, QUICK, TINY, tessera

pytestmark = pytest.mark.tvm

CONV = EXAMPLES / "conv2d.json"


def test_a_measuring_process_killed_with_sigkill_is_a_clean_error():
    payload = {"operator": json.loads(CONV.read_text()), "bindings": TINY, "device": "local", **QUICK}

    def kill_worker(fraction: float, message: str) -> None:
        for child in psutil.Process().children():
            if "spawn_main" in " ".join(child.cmdline()):
                child.send_signal(signal.SIGKILL)

    with pytest.raises(WorkerCrashed, match="core.compile.handlers:measure_call was killed by signal SIGKILL"):
        call_in_subprocess("core.compile.handlers:measure_call", {"payload": payload}, on_progress=kill_worker)


def test_cli_measure_prints_latencies_speedup_and_errors_cleanly():
    out = tessera(
        "measure",
        str(EXAMPLES / "depthwise_separable.json"),
        "--bind",
        "C_in=4,C_out=4,H=8,W=8",
        "--repeat",
        "3",
        "--min-repeat-ms",
        "5",
    )
    assert out.returncode == 0, out.stderr
    assert "TVM kernel: untuned" in out.stdout and "TVM / PyTorch speed-up:" in out.stdout
    assert re.search(r"speed-up: [\d.]+x \[[\d.]+, [\d.]+\] \(median of interleaved rounds, 95% interval\)", out.stdout)
    lines = out.stdout.splitlines()
    assert lines[2].split()[-1] == "threads" and lines[3].split()[0] == "TVM" and lines[4].split()[0] == "PyTorch"
    assert all(1 <= int(line.split()[-1]) <= os.cpu_count() for line in lines[3:5])  # each side's own count
    assert "[100%] done" in out.stderr

    bad = tessera("measure", str(EXAMPLES / "grouped_conv.json"), "--bind", "G=3")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "fc grouped_fc" in bad.stderr and "is not an integer" in bad.stderr


def test_cli_codegen_prints_tvmscript_and_torch_source():
    out = tessera("codegen", str(CONV), "--target", "tvmscript", "--bind", "C_in=4,C_out=4,H=8,W=8")
    assert out.returncode == 0, out.stderr
    assert 'T.sblock("share")' in out.stdout and "x: T.Buffer((1, 4, 8, 8)" in out.stdout
    out = tessera("codegen", str(CONV), "--bind", "C_in=4,C_out=4,H=8,W=8")
    assert out.returncode == 0 and "class Conv2d(nn.Module):" in out.stdout and "nn.functional.conv2d(" in out.stdout
