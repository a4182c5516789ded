"""Every job kind's result is a type (core.jobs.contract, core.jobs.registry): results as the
handlers have kept them read back as their types and write the same JSON; an unknown, missing
or mistyped field is refused with a message naming it and the kind; and a job whose handler
returns a result that breaks its type fails with that message and writes nothing."""

from __future__ import annotations

import copy
import threading

import pytest

from core.jobs.queue import DONE, FAILED
from core.jobs.registry import job_kinds, job_result, read_result, result_summary
from core.jobs.worker import run_job
from core.store import InvalidResult
from core.store.score import Score

from .job_kinds import HERE

LAYERS = [
    {"name": "conv1", "c_in": 3, "c_out": 4, "height": 8, "width": 8, "kernel": 3, "replaced": False, "detail": "x"},
    {"name": "layer1.0.conv1", "c_in": 4, "c_out": 4, "height": 8, "width": 8, "kernel": 3, "replaced": True,
     "detail": "direct"},
]  # fmt: skip
REPLACEMENT = {"operator": "conv2d", "replaced": 1, "layers": LAYERS}
FISHER = {
    "fisher_potential": 2.5,
    "fisher_original": 2.0,
    "fisher_passes": True,
    "fisher_layers": {"layer1.0.conv1": 2.5},
    "fisher_layers_original": {"layer1.0.conv1": 2.0},
    "replacement": REPLACEMENT,
}
KERNEL = {"kernel": "fused_conv2d_add", "weight": 2, "kernel_class": "conv2d", "source": "tuned", "latency_ms": 0.01}
#: each kind's result as the handlers have kept it on job rows (the JSON of stores written so far)
KEPT = {
    "measure": {"latency_ms": 0.25, "flops": 1e6, "bindings": {"C_in": 8}, "trials": [[0, 0.3]], "tuned": True},
    "transfer": {"latency_ms": 0.2, "transfer": {"found": 2, "applied": 1}, "schedule_source": "transfer:a trial 3"},
    "fisher": {
        "score": {"dataset": "digits", "backbone": "resnet18/w4", "epochs": 0, "fisher_potential": 2.5},
        **FISHER,
    },
    "train": {
        "score": {
            "dataset": "digits",
            "backbone": "resnet18/w4",
            "epochs": 2,
            "accuracy": 0.75,
            "accuracy_per_epoch": [0.5, 0.75],
            "fisher_potential": 2.5,
        },
        **FISHER,
        "accuracy_per_epoch": [0.5, 0.75],
        "seconds_per_epoch": [1.5, 1.25],
        "reason": "",
        "outcome": "trained",
        "epochs_planned": 2,
        "classes": 10,
    },
    "test": {
        "score": {
            "dataset": "digits",
            "backbone": "resnet18/w4",
            "epochs": 2,
            "test_seeds": 2,
            "test_accuracy": 0.8,
            "test_accuracy_std": 0.01,
            "test_difference": -0.005,
            "test_difference_low": -0.05,
            "test_difference_high": 0.04,
            "test_margin": 0.01,
        },
        "runs": [
            {"seed": 1, "accuracy": 0.79, "val_accuracy": 0.8, "outcome": "trained", "seconds": 3.5},
            {"seed": 2, "accuracy": 0.81, "val_accuracy": 0.75, "outcome": "trained", "seconds": 3.25},
        ],
        "original": [0.8, 0.81],
        "margin": 0.01,
        "epochs": 2,
    },
    "e2e": {
        "score": {
            "dataset": "digits",
            "backbone": "resnet18/w4",
            "e2e_latency_ms": 2.0,
            "e2e_baseline_ms": 3.0,
            "e2e_speedup": 1.5,
            "e2e_tuned": True,
            "deploy": "resnet18/w64@32px",
            "e2e_torch_ms": 5.0,
            "e2e_torch_baseline_ms": 6.0,
        },
        "untuned_kernels": [],
        "deploy": "resnet18/w64@32px",
        "threads": 2,
        "load": 1.25,
        "latency_ms": 2.0,
        "latency_std_ms": 0.01,
        "baseline_latency_ms": 3.0,
        "baseline_std_ms": 0.02,
        "torch_latency_ms": 5.0,
        "torch_baseline_ms": 6.0,
        "torch_speedup": 1.2,
        "max_abs_error": 1e-6,
        "timing_note": None,
        "kernels": [KERNEL],
        "baseline_kernels": [{**KERNEL, "source": "database"}],
        "operator_kernels": [{"kernel": "fused_conv2d_add", "in_network_ms": 0.01, "alone_ms": 0.01, "ratio": 1.0}],
        "replacement": REPLACEMENT,
    },
    "search": {"found": 3, "scored": 3, "queued": 0, "failures": [], "seconds": 1.5, "stats": {"tried": 9}},
}
#: a required field of each kind's result, and a bad value of one of its fields (by path)
MISSING = {"measure": "latency_ms", "transfer": "latency_ms", "fisher": "fisher_original", "train": "outcome",
           "test": "runs", "e2e": "kernels", "search": "found"}  # fmt: skip
MISTYPED = {
    "measure": (("trials", 0, 1), "x", r"the measurement: trials\[0\]\[1\] must be a number, got 'x'"),
    "transfer": (("latency_ms",), -1.0, r"the measurement: latency_ms must be a positive number"),
    "fisher": (("fisher_layers", "layer1.0.conv1"), None, r"fisher_layers\['layer1.0.conv1'\] must be a number"),
    "train": (("outcome",), "done", r"the train result: outcome must be one of trained, stopped early,"),
    "test": (("runs", 1, "seed"), "2", r"the test result: runs\[1\]: seed must be a whole number, got '2'"),
    "e2e": (("kernels", 0, "weight"), 1.5, r"the e2e result: kernels\[0\]: weight must be a whole number, got 1.5"),
    "search": (("failures",), "none", r"the search result: failures must be a list of which each is a string"),
}


def _changed(data: dict, path: tuple, value) -> dict:
    data = copy.deepcopy(data)
    inner = data
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    return data


def test_every_declared_kind_has_a_kept_result_that_reads_back_as_its_type():
    assert set(job_kinds()) == set(KEPT)
    for name, kind in job_kinds().items():
        result = read_result(name, KEPT[name])
        assert isinstance(result, kind.result)
        assert read_result(name, result.to_dict()) == result  # what it writes reads back the same
        assert result_summary(name, result)  # the job monitor's line for it


@pytest.mark.parametrize("kind", sorted(KEPT))
def test_an_unknown_missing_or_mistyped_field_is_refused_by_name(kind):
    what = job_kinds()[kind].result.what
    with pytest.raises(InvalidResult, match=rf"{what} has unknown field\(s\) 'surprise'; it takes "):
        read_result(kind, {**KEPT[kind], "surprise": 1})
    with pytest.raises(InvalidResult, match=rf"{what} is missing field\(s\) '{MISSING[kind]}'"):
        read_result(kind, {k: v for k, v in KEPT[kind].items() if k != MISSING[kind]})
    path, value, message = MISTYPED[kind]
    with pytest.raises(InvalidResult, match=message):
        read_result(kind, _changed(KEPT[kind], path, value))


def test_a_nested_score_is_refused_by_name():
    with pytest.raises(InvalidResult, match=r"the fisher result: score is missing field\(s\) 'dataset'"):
        read_result("fisher", _changed(KEPT["fisher"], ("score",), {"backbone": "resnet18/w4"}))
    with pytest.raises(InvalidResult, match="the score: e2e_latency_ms must be a positive number, got 0.0"):
        read_result("e2e", _changed(KEPT["e2e"], ("score", "e2e_latency_ms"), 0.0))
    with pytest.raises(
        InvalidResult, match=r"the score: accuracy_per_epoch must be numbers, none NaN, got \(0.5, nan\)"
    ):
        Score("digits", "resnet18/w4", accuracy_per_epoch=(0.5, float("nan")))


def test_summaries_say_what_each_kind_found():
    lines = {kind: result_summary(kind, read_result(kind, data)) for kind, data in KEPT.items()}
    assert lines["fisher"] == "Fisher Potential 1.25x the original network's"
    assert lines["train"] == "75.0%"
    assert lines["e2e"] == "1.50x the original network (resnet18/w64@32px)"
    assert lines["search"] == "3 candidates, 3 scored, 0 queued"
    stopped = _changed(KEPT["train"], ("outcome",), "stopped early")
    assert result_summary("train", read_result("train", _changed(stopped, ("reason",), "below the best"))) == (
        "75.0%, stopped early: below the best"
    )


@pytest.mark.parametrize("kind", sorted(KEPT))
def test_a_job_whose_result_breaks_its_type_fails_naming_the_field_and_writes_nothing(store, queue, conv2d, kind):
    broken = {**KEPT[kind], "surprise": 1}
    job_id = queue.submit(kind, {"result": broken}, operator_id=conv2d)
    run_job(queue, queue.claim([kind]), f"{HERE}:echo_job", heartbeat_interval=60, stop=threading.Event())
    job = queue.get(job_id)
    assert job.state == FAILED and job.result is None
    assert f"its handler {HERE}:echo_job returned an invalid result: " in job.error
    assert "has unknown field(s) 'surprise'" in job.error
    assert store.db["measurements"].count == store.db["scores"].count == 0


def test_a_job_whose_result_keeps_its_type_records_it(store, queue, conv2d):
    job_id = queue.submit("train", {"result": KEPT["train"]}, operator_id=conv2d)
    run_job(queue, queue.claim(["train"]), f"{HERE}:echo_job", heartbeat_interval=60, stop=threading.Event())
    job = queue.get(job_id)
    assert (job.state, job.message) == (DONE, "75.0%")
    assert job_result(job) == read_result("train", KEPT["train"])
    [row] = store.results()
    assert (row["accuracy"], row["fisher_potential"], row["dataset"]) == (0.75, 2.5, "digits")
