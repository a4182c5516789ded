"""The Measurement contract (core.store.measurement): what measuring, tuning and transfer-tuning
return, a job keeps and the store records. Its JSON round-trips; an unknown or missing field,
or a value of the wrong type, is refused with an InvalidResult naming the field, whether it
comes from a caller or from a finished job."""

from __future__ import annotations

import json

import pytest

from core.jobs.queue import RUNNING
from core.store import InvalidResult
from core.store.measurement import Measurement

TUNED = Measurement(
    latency_ms=0.5,
    latency_std_ms=0.01,
    latency_runs_ms=(0.49, 0.5, 0.52),
    max_abs_error=2e-7,
    operator="grouped_conv",
    bindings={"C_in": 8, "G": 2},
    batch=2,
    flops=4e6,
    params=288.0,
    target='{"kind":"llvm","num-cores":2}',
    threads=2,
    algorithm="gspc",
    layout="NCHW (packed T_O=4,T_I=4)",
    schedule_source="tuned",
    tuned=True,
    algorithm_details={"convolution": "conv 8->8, 3x3", "tiles": {"T_O": 4, "T_I": 4, "columns": 2}},
    torch_latency_ms=1.5,
    trials=((0, 0.7), (2, 0.5)),
    trial_count=3,
    new_trials=3,
    best_trial_ms=0.5,
    tuning_dir="/tmp/tuning/local/abc",
)


def test_a_measurement_round_trips_through_json():
    data = json.loads(json.dumps(TUNED.to_dict()))
    assert data["trials"] == [[0, 0.7], [2, 0.5]] and data["algorithm_details"]["tiles"]["T_O"] == 4
    assert Measurement.from_dict(data) == TUNED
    assert Measurement.from_dict({"latency_ms": 2}) == Measurement(latency_ms=2.0)  # the rest: not known


@pytest.mark.parametrize(
    "data, message",
    [
        ({"latency_std_ms": 0.1}, r"^the measurement is missing field\(s\) 'latency_ms'$"),
        ({"latency_ms": 1.0, "speedup_vs_torch": 2.0}, r"^the measurement has unknown field\(s\) 'speedup_vs_torch'; "),
        (
            {"latency_ms": 1.0, "found": 3, "latnecy": 1},
            r"unknown field\(s\) 'found', 'latnecy'; it takes latency_ms, ",
        ),
        ({"latency_ms": 1.0, "batch": 0}, r"^the measurement: batch must be a positive whole number, got 0$"),
        ({"latency_ms": 1.0, "transfer": []}, r"^the measurement: transfer must be an object, got \[\]$"),
        ({"latency_ms": 1.0, "torch_latency_ms": 0}, r"torch_latency_ms must be a positive number, got 0"),
    ],
)
def test_a_malformed_measurement_is_refused_naming_the_field(data, message):
    with pytest.raises(InvalidResult, match=message):
        Measurement.from_dict(data)


def test_the_store_records_a_measurement_deriving_what_it_leaves_out(store, conv2d):
    measurement_id = store.add_measurement(conv2d, None, TUNED)
    [row] = store.results()
    assert row["measurement_id"] == measurement_id
    assert row["speedup"] == pytest.approx(3.0) and row["gflops"] == pytest.approx(8.0)  # 4e6 FLOPs in 0.5 ms
    assert (row["trial_count"], row["algorithm"], row["schedule_source"]) == (3, "gspc", "tuned")
    assert store.trials(measurement_id) == [(0, 0.7), (2, 0.5)]


def test_a_job_whose_result_breaks_the_contract_writes_nothing(store, queue, conv2d):
    job_id = queue.submit("measure", {"bindings": {"C_in": 4}}, operator_id=conv2d)
    job = queue.claim(["measure"])
    with pytest.raises(InvalidResult, match=r"unknown field\(s\) 'speedup_vs_torch'"):
        queue.complete(job, {"latency_ms": 1.0, "speedup_vs_torch": 2.0})
    assert queue.get(job_id).state == RUNNING and store.db["measurements"].count == 0
    assert queue.complete(job, {"latency_ms": 1.0, "speedup": 2.0})
    [row] = store.results()
    assert json.loads(row["bindings"]) == {"C_in": 4} and row["speedup"] == 2.0  # the request's sizes
