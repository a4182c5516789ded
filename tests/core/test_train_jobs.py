"""The accuracy-side jobs end to end: queued in a real store, run by real worker processes,
their scores written to the scores table; `tessera evaluate`; end-to-end latency with TVM."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.data.datasets import DEFAULT_DATASET
from core.ir.serialize import read_document
from core.jobs.queue import DONE, FAILED, JobQueue
from core.jobs.supervisor import Supervisor
from core.networks.settings import DeploySettings
from core.store import Store
from core.train.payloads import E2EPayload, FisherPayload, TrainPayload
from tests.core.accuracy_settings import SHORT, TINY, scores
from tests.support import EXAMPLES


@pytest.mark.slow
def test_training_job_through_a_worker_into_the_store(tmp_path):
    doc = read_document(EXAMPLES / "depthwise_separable.json")
    misfit = read_document(EXAMPLES / "grouped_conv.json")
    misfit["bindings"]["G"] = 7  # divides none of resnet18/w4's channel counts
    path = tmp_path / "results.db"
    with Store(path) as store:
        queue = JobQueue(store)
        op = store.add_operator(doc, "depthwise_separable")
        train = queue.submit("train", TrainPayload(doc, TINY, SHORT).to_dict(), operator_id=op)
        bad = queue.submit(
            "fisher",
            FisherPayload(misfit, TINY).to_dict(),
            operator_id=store.add_operator(misfit, "g7"),
            max_attempts=1,
        )
        Supervisor(path, workers=1).run(report=lambda line: None)
        job, failed = queue.get(train), queue.get(bad)
        assert job.state == DONE, job.error
        rows = scores(store)
    assert len(rows) == 1
    row = rows[0]
    assert (row["operator_id"], row["job_id"], row["dataset"], row["backbone"], row["epochs"]) == (
        op,
        train,
        f"{DEFAULT_DATASET}@8px",
        "resnet18/w4",
        1,
    )
    assert json.loads(row["accuracy_per_epoch"]) == [row["accuracy"]] and 0.0 <= row["accuracy"] <= 1.0
    result = job.result
    assert row["fisher_potential"] == pytest.approx(result["fisher_potential"]) and result["fisher_potential"] > 0
    assert result["fisher_passes"] == (result["fisher_potential"] >= result["fisher_original"])
    assert set(result["fisher_layers"]) == set(result["fisher_layers_original"])
    replaced = [layer["name"] for layer in result["replacement"]["layers"] if layer["replaced"]]
    assert sorted(replaced) == sorted(result["fisher_layers"])
    assert result["replacement"]["replaced"] == 14  # every stride-1 conv, the 3-channel stem too
    assert result["epochs_planned"] == 1 and result["outcome"] in ("trained", "did not learn")  # one short epoch
    assert failed.state == FAILED
    assert "EvaluationError: operator grouped_conv fits none of the 20 convolutions of resnet18/w4" in failed.error
    assert "binding error" in failed.error and "stride 2" in failed.error


def origin(kernel: dict) -> str:
    """Where a kernel's schedule came from, without the note on records skipped as wrong."""
    return kernel["source"].split(";")[0]


@pytest.mark.slow
@pytest.mark.tvm
def test_tuned_against_tuned_end_to_end_through_a_worker_into_the_store(tmp_path):
    """Both networks tuned (2 trials per kernel) in a worker, the score in the store; the same
    operator again reuses every kernel; another without a budget is not called tuned; the first
    at another deployment size reuses its kernels' schedules by transfer."""
    path, root = tmp_path / "e2e.db", tmp_path / "tuning"
    deploy = {"width": 4, "resolution": 8, "cost_model": "random", "repeat": 3, "min_repeat_ms": 5}

    def evaluate(name: str, **settings) -> tuple:
        doc = read_document(EXAMPLES / f"{name}.json")
        with Store(path) as store:
            payload = E2EPayload(
                doc, DeploySettings("vgg", **{**deploy, **settings}), replace(TINY, backbone="vgg"), str(root)
            )
            job_id = JobQueue(store).submit("e2e", payload.to_dict(), operator_id=store.add_operator(doc, name))
            Supervisor(path, workers=1).run(report=lambda line: None)
            job = JobQueue(store).get(job_id)
            assert job.state == DONE, job.error
            return job.result, {r["operator_name"]: r for r in store.results()}[name]

    first, row = evaluate("depthwise_separable", trials=2)
    assert first["score"]["e2e_tuned"] and first["untuned_kernels"] == []
    assert row["e2e_speedup"] == first["speedup"]  # the median of paired rounds' ratios ...
    assert first["speedup_low"] <= first["speedup"] <= first["speedup_high"]  # ... with its 95% interval
    assert first["deploy"] == "vgg/w4@8px" and first["torch_latency_ms"] > 0 and first["torch_baseline_ms"] > 0
    assert "timing_note" in first  # None, or why the network timings are in doubt (a busy machine)
    # a source may add "; N faster record(s) computed wrong numbers and were skipped" (core.networks.schedules)
    assert {origin(k) for k in first["kernels"] + first["baseline_kernels"]} <= {"tuned", "database", "default kept"}
    operator_kernels = [k for k in first["kernels"] if k["kernel"].startswith("tessera_")]
    assert len(operator_kernels) == len(first["operator_kernels"]) >= 4  # one per layer size
    assert all(k["in_network_ms"] > 0 and k["alone_ms"] > 0 for k in first["operator_kernels"])
    assert first["replacement"]["replaced"] == 8  # every conv, the 3-channel stem too

    again, _ = evaluate("depthwise_separable", trials=0)
    assert {origin(k) for k in again["kernels"] + again["baseline_kernels"]} == {"database"}

    other, row = evaluate("grouped_conv", trials=0, transfer=False)  # its kernels were never tuned
    assert not other["score"]["e2e_tuned"] and all(k.startswith("tessera_") for k in other["untuned_kernels"])
    assert row["e2e_speedup"] is None  # no speedup without tuned kernels on both sides

    moved, _ = evaluate("depthwise_separable", trials=0, resolution=16)  # new sizes: transfer
    sources = {k["kernel"]: origin(k) for k in moved["kernels"] if k["kernel"].startswith("tessera_")}
    assert all(s.startswith("transfer:") or s == "default kept" for s in sources.values()), sources
