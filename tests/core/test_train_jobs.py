"""The accuracy-side jobs end to end: queued in a real store, run by real worker processes,
their scores written to the scores table; `tessera evaluate`; end-to-end latency with TVM."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from core.ir.serialize import read_document
from core.jobs.queue import DONE, FAILED, JobQueue
from core.jobs.supervisor import Supervisor
from core.store import Store
from core.train.errors import EvaluationError
from core.train.settings import EvalSettings
from tests.support import EXAMPLES

TINY = {"backbone": "resnet18", "width": 4, "resolution": 8, "limit": 200, "fisher_batch": 16}


def scores(store: Store) -> list[dict]:
    return list(store.db["scores"].rows_where(order_by="id"))


@pytest.mark.slow
def test_training_job_through_a_worker_into_the_store(tmp_path):
    doc = read_document(EXAMPLES / "depthwise_separable.json")
    misfit = read_document(EXAMPLES / "grouped_conv.json")
    misfit["bindings"]["G"] = 7  # divides none of resnet18/w4's channel counts
    path = tmp_path / "results.db"
    with Store(path) as store:
        queue = JobQueue(store)
        op = store.add_operator(doc, "depthwise_separable")
        train = queue.submit(
            "train", {"operator": doc, **TINY, "epochs": 1, "max_batches": 3, "batch_size": 16}, operator_id=op
        )
        bad = queue.submit(
            "fisher", {"operator": misfit, **TINY}, operator_id=store.add_operator(misfit, "g7"), max_attempts=1
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
        "digits@8px",
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
    assert result["epochs_planned"] == 1 and not result["stopped_early"]
    assert failed.state == FAILED
    assert "EvaluationError: operator grouped_conv fits none of the 20 convolutions of resnet18/w4" in failed.error
    assert "binding error" in failed.error and "stride 2" in failed.error


@pytest.mark.slow
def test_evaluate_fisher_only_now(tmp_path, capsys):
    path = tmp_path / "cli.db"
    code = main(
        [
            "evaluate",
            str(EXAMPLES / "shift_conv.json"),
            "--fisher-only",
            "--now",
            "--store",
            str(path),
            "--backbone",
            "vgg",
            "--width",
            "4",
            "--resolution",
            "8",
            "--limit",
            "100",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "queued job 1 (fisher shift_conv) on vgg/w4 at digits@8px" in out
    assert "Fisher Potential" in out and "vs original" in out and "replaced 8 of 8 convolutions" in out
    with Store(path) as store:
        (row,) = scores(store)
        assert (row["backbone"], row["epochs"], row["accuracy"]) == ("vgg/w4", 0, None)
        assert row["fisher_potential"] > 0


def test_evaluate_rejects_bad_requests_before_queueing(tmp_path, capsys):
    path = tmp_path / "none.db"
    base = ["evaluate", str(EXAMPLES / "conv2d.json"), "--store", str(path)]
    assert main([*base, "--dataset", str(tmp_path / "missing")]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    assert main([*base, "--width", "0"]) == 1
    assert "width must be a whole number >= 1" in capsys.readouterr().err
    assert main([*base, "--epochs", "0"]) == 1
    assert main([*base, "--theta", "2"]) == 1
    assert "theta" in capsys.readouterr().err
    assert not path.exists()
    with pytest.raises(EvaluationError, match="val_fraction"):
        EvalSettings(val_fraction=0)


@pytest.mark.slow
@pytest.mark.tvm
def test_end_to_end_latency_job(tmp_path):
    doc = read_document(EXAMPLES / "gated_separable.json")  # its unfolds need the relax converter
    path = tmp_path / "e2e.db"
    with Store(path) as store:
        queue = JobQueue(store)
        job_id = queue.submit(
            "e2e",
            {"operator": doc, **TINY, "backbone": "vgg", "repeat": 3, "min_repeat_ms": 10},
            operator_id=store.add_operator(doc),
        )
        Supervisor(path, workers=1).run(report=lambda line: None)
        job = queue.get(job_id)
        [row] = store.results()  # the whole-network figures reach the results view
    assert job.state == DONE, job.error
    assert row["e2e_latency_ms"] == pytest.approx(job.result["latency_ms"])
    assert row["e2e_speedup"] == pytest.approx(job.result["speedup"])
    r = job.result
    assert r["latency_ms"] > 0 and r["baseline_latency_ms"] > 0
    assert r["speedup"] == pytest.approx(r["baseline_latency_ms"] / r["latency_ms"])
    assert r["params"] < r["baseline_params"]  # separable kernels have fewer weights than 3x3 convs
    assert r["backbone"] == "vgg/w4" and r["replacement"]["replaced"] == 7  # all but the 3-channel stem
