"""The `auto` algorithm (core.compile.auto): every algorithm that can run the operator measured,
the fastest kept and named in the result and in `tessera measure`'s output."""

from __future__ import annotations

import json

import pytest

from core.compile.algorithms import auto_summary
from core.compile.handlers import measure_job
from tests.support import EXAMPLES, Ctx, tessera

pytestmark = [pytest.mark.tvm, pytest.mark.usefixtures("restore_threads")]

SMALL = {"C_in": 6, "C_out": 10, "H": 9, "W": 7, "K": 3, "G": 2}
QUICK = {"repeat": 3, "min_repeat_ms": 5}
EVERY = {"default", "gspc", "nchwc", "im2col", "winograd"}


def _payload(name: str, **extra) -> dict:
    document = json.loads((EXAMPLES / f"{name}.json").read_text())
    return {"operator": document, "device": "local", "algorithm": "auto", **QUICK, **extra}


def test_auto_keeps_the_fastest_algorithm_and_names_it():
    ctx = Ctx()
    result = measure_job(_payload("grouped_conv", bindings=SMALL), ctx)
    auto = result.algorithm_details["auto"]
    assert set(auto["latency_ms"]) == EVERY and auto["failed"] == {}
    assert [why.split(":")[0] for why in auto["refused"]] == [
        "algorithm 'separable' runs depthwise-separable convolutions only"
    ]
    # kept: the fastest in alternating rounds; its result is its own measurement
    assert result.algorithm == auto["kept"] == min(auto["latency_ms"], key=auto["latency_ms"].get)
    assert set(auto["measured_ms"]) == EVERY and all(ms > 0 for ms in auto["latency_ms"].values())
    assert result.latency_ms == auto["measured_ms"][result.algorithm] and result.max_abs_error < 1e-4
    assert any(message.startswith("winograd (5 of 5)") for _, message in ctx.seen)
    assert auto_summary(result.to_dict()["algorithm_details"]).startswith(
        f"auto kept {result.algorithm}, the fastest in alternating rounds"
    )


def test_auto_measures_only_what_runs_the_operator_and_says_why():
    result = measure_job(_payload("involution", bindings={"C": 8, "H": 6, "W": 6}), Ctx())
    auto = result.algorithm_details["auto"]
    assert result.algorithm == "default" and list(auto["latency_ms"]) == ["default"]
    assert len(auto["refused"]) == 5 and "'winograd' runs 3x3 stride-1 convolutions only" in auto["refused"][3]


def test_auto_measures_the_fused_kernel_of_a_depthwise_separable_operator():
    sizes = {"C_in": 6, "C_out": 10, "H": 7, "W": 9, "K": 3}
    result = measure_job(_payload("depthwise_separable", bindings=sizes), Ctx())
    auto = result.algorithm_details["auto"]
    assert set(auto["latency_ms"]) == {"default", "separable"} and auto["failed"] == {}
    assert result.algorithm == auto["kept"] and result.max_abs_error < 1e-4


TUNED = {"C_in": 4, "C_out": 4, "H": 6, "W": 6, "K": 3, "G": 1}


@pytest.fixture(scope="module")
def tuning_root(tmp_path_factory):
    """One tuning root for the module: auto finds the trials the tests before it spent."""
    return str(tmp_path_factory.mktemp("tuning"))


def _tuned(algorithm: str, root: str) -> dict:
    return _payload(
        "grouped_conv", bindings=TUNED, algorithm=algorithm, tune_trials=2, cost_model="random", tuning_root=root
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["nchwc", "im2col", "winograd", "default"])
def test_each_algorithm_is_tuned_by_metaschedule(name, tuning_root):
    result = measure_job(_tuned(name, tuning_root), Ctx())
    assert result.algorithm == name and result.trial_count == 2 and result.max_abs_error < 1e-4
    assert result.best_trial_ms == min(ms for _, ms in result.trials)
    if result.tuned:
        assert result.schedule_source == "tuned"
    else:  # the tuned schedule lost to the unscheduled compute: the result says so
        assert result.schedule_source.startswith("untuned (the tuned schedule ran slower")


@pytest.mark.slow
def test_auto_tunes_every_algorithm_with_the_same_budget(tuning_root):
    result = measure_job(_tuned("auto", tuning_root), Ctx())  # the trials above are reused
    auto = result.algorithm_details["auto"]
    assert set(auto["latency_ms"]) == EVERY and result.algorithm == auto["kept"]
    assert result.trial_count == 2 and result.max_abs_error < 1e-4


def test_cli_measure_auto_prints_the_pick():
    out = tessera(
        "measure", str(EXAMPLES / "conv2d.json"), "--algorithm", "auto", "--bind", "C_in=4,C_out=6,H=5,W=7",
        "--repeat", "2", "--min-repeat-ms", "2",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("auto kept "))
    picked = line.split()[2].rstrip(",")
    assert picked in EVERY and f"algorithm {picked}, layout" in out.stdout
    assert all(name in line for name in EVERY)
