"""measure_job without tuning: a real TVM build on the local CPU checked against the torch
module and timed next to it; progress, cancellation and the errors of a bad request."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from core.analysis.summary import summarize
from core.compile.errors import CompileError, NumericalMismatch
from core.compile.handlers import measure_job
from core.compile.timing import Timing, check_close, timing_note
from core.errors import TesseraError
from core.ir.serialize import load_operator
from core.jobs.errors import JobCancelled, PayloadError
from tests.support import EXAMPLES, QUICK, Ctx

pytestmark = [pytest.mark.tvm, pytest.mark.usefixtures("restore_threads")]

TINY = {"C_in": 4, "C_out": 6, "H": 8, "W": 8, "K": 3, "G": 2}


def _payload(name: str, **extra) -> dict:
    document = json.loads((EXAMPLES / f"{name}.json").read_text())
    return {"operator": document, "bindings": TINY, "tune_trials": 0, "device": "local", **QUICK, **extra}


def test_untuned_measurement_is_checked_timed_and_compared_with_torch(operator_parses):
    ctx = Ctx()
    result = measure_job(_payload("grouped_conv", batch=2), ctx).to_dict()
    assert len(operator_parses) == 1  # the job's operator document is read once
    json.dumps(result)  # the job system stores it as JSON
    cost = summarize(load_operator(EXAMPLES / "grouped_conv.json"), TINY).numeric_cost
    flops = cost["flops"] * 2
    assert result["flops"] == flops and result["params"] == cost["params"]
    assert result["latency_ms"] > 0 and result["torch_latency_ms"] > 0 and result["latency_std_ms"] >= 0
    assert len(result["latency_runs_ms"]) >= 6  # interleaved rounds: at least as many as give a 95% interval
    assert result["latency_ms"] == min(result["latency_runs_ms"])  # the least disturbed round
    assert result["gflops"] == pytest.approx(flops / result["latency_ms"] / 1e6)
    assert result["speedup_low"] <= result["speedup"] <= result["speedup_high"]
    assert 1 <= result["threads"] <= os.cpu_count() and result["load"] >= 0  # each side: its faster count
    assert 1 <= result["torch_threads"] <= os.cpu_count()
    assert result["max_abs_error"] < 1e-4 and "timing_note" in result
    assert result["tuned"] is False and result["trial_count"] == 0 and result["trials"] == []
    assert '"kind":"llvm"' in result["target"] and '"num-cores"' in result["target"]
    assert result["bindings"] == {"C_in": 4, "C_out": 6, "G": 2, "H": 8, "K": 3, "W": 8}
    fractions = [f for f, _ in ctx.seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_mismatch_names_the_operator_and_the_error():
    with pytest.raises(NumericalMismatch, match=r"conv2d: TVM's output differs .* by up to 0\.5") as info:
        check_close(np.full((2, 3), 1.5, "float32"), np.ones((2, 3), "float32"), "conv2d")
    assert info.value.max_abs_error == 0.5
    assert check_close(np.ones(3, "float32"), np.ones(3, "float32") + 1e-6, "conv2d") < 1e-5
    with pytest.raises(NumericalMismatch):
        check_close(np.array([np.nan], "float32"), np.zeros(1, "float32"), "conv2d")


def test_a_cancelled_job_stops_before_building():
    ctx = Ctx(cancel=True)
    with pytest.raises(JobCancelled, match="measuring conv2d was cancelled"):
        measure_job(_payload("conv2d"), ctx)
    assert all(f < 0.5 for f, _ in ctx.seen)


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"device": "phone"}, CompileError, "unknown device 'phone'"),
        ({"tune_trials": -1}, CompileError, "tune_trials must be a non-negative integer"),
        ({"batch": 0}, CompileError, "batch must be a positive integer"),
        ({"min_repeat_ms": -1}, CompileError, "min_repeat_ms must be a non-negative number"),
        ({"min_repeat_ms": "long"}, PayloadError, "the measure payload: min_repeat_ms must be a number, got 'long'"),
        ({"repeats": 5}, PayloadError, "the measure payload has unknown field\\(s\\) 'repeats'; it takes operator, "),
        ({"operator": None}, PayloadError, "the measure payload: operator must be an object, got None"),
        ({"bindings": {"C_in": 0}}, TesseraError, "C_in=0"),
        ({"bindings": {"G": 3}}, TesseraError, "fc grouped_fc .* C_out/G = 64/3 is not an integer"),
        ({"operator": {"format": "tessera.operator"}}, TesseraError, "version"),
    ],
)
def test_bad_requests_are_clear_errors(change, error, message):
    with pytest.raises(error, match=message):
        measure_job({**_payload("grouped_conv"), **change}, Ctx())


def test_a_timing_in_doubt_says_why_in_one_line():
    """Every reason, with its figures; a call of a few microseconds is timed like any other
    (rounds of many calls), so its shortness alone puts nothing in doubt."""
    assert timing_note("", "") is None
    wide = "the speedup over PyTorch's 95% interval is wider than +-12%: 3 [1, 9]"
    behind = Timing.of([2e-3] * 6).behind(1.0)
    assert behind == "the tuned kernel timed 100% slower than its best trial (1 ms)"
    assert timing_note(wide, "", behind) == f"in doubt: {wide}; {behind}"
    assert Timing.of([2e-6] * 6).behind(None) == ""


def test_the_peak_comes_from_the_cpus_features():
    from core.compile.target import peak_gflops

    avx512 = "cpu MHz\t\t: 2600.000\nflags\t\t: fpu sse avx2 fma avx512f\n"
    assert peak_gflops(2, avx512)[0] == pytest.approx(2 * 2.6 * 16 * 2 * 2)
    assert peak_gflops(1, avx512.replace(" avx512f", ""))[0] == pytest.approx(2.6 * 8 * 2 * 2)
    assert peak_gflops(1, avx512.replace(" avx512f", "").replace(" avx2 fma", ""))[0] == pytest.approx(2.6 * 4 * 2)
    assert peak_gflops(2, "flags\t\t: avx2\n") == (None, "peak unknown: the CPU's clock is not in /proc/cpuinfo")
