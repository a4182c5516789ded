"""The accuracy-side jobs end to end: queued in a real store, run by real worker processes,
their scores written to the scores table; `tessera evaluate`; end-to-end latency with TVM."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.cli import main
from core.ir.serialize import read_document
from core.jobs.queue import DONE, FAILED, JobQueue
from core.jobs.supervisor import Supervisor
from core.networks.settings import DeploySettings
from core.store import Store
from core.train.errors import EvaluationError
from core.train.payloads import E2EPayload, FisherPayload, TrainPayload
from core.train.settings import EvalSettings
from tests.core.accuracy_settings import SHORT, TINY
from tests.support import EXAMPLES


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
        "digits-shifted@8px",
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
    assert "queued job 1 (fisher shift_conv) on vgg/w4 at digits-shifted@8px" in out
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
def test_evaluate_now_prints_one_table_and_says_when_the_networks_are_not_tuned(tmp_path, capsys):
    path = tmp_path / "cli.db"
    args = ["evaluate", str(EXAMPLES / "depthwise_separable.json"), "--now", "--store", str(path)]
    sizes = ["--backbone", "vgg", "--width", "4", "--resolution", "8", "--limit", "100", "--epochs", "1"]
    deploy = ["--deploy-width", "4", "--deploy-resolution", "8", "--tuning-dir", str(tmp_path / "tuning")]
    assert main([*args, *sizes, *deploy, "--no-transfer", "--from", str(tmp_path)]) == 1
    assert "--from names where transfer-tuning takes schedules from; drop --no-transfer" in capsys.readouterr().err
    assert main([*args, *sizes, *deploy, "--trials", "0", "--no-transfer"]) == 0
    out = capsys.readouterr().out
    table = out[out.rindex("with the operator") :].splitlines()
    assert table[1].startswith("accuracy (proxy)") and table[2].startswith("Fisher Potential")
    assert table[3].startswith("TVM, NOT all tuned (vgg/w4@8px)") and table[4].startswith("PyTorch eager")
    assert "not tuned (TVM's default, so no basis for a speedup)" in out
    with Store(path) as store:
        e2e = [row for row in scores(store) if row["e2e_latency_ms"] is not None]
        assert [(row["e2e_tuned"], row["deploy"]) for row in e2e] == [(0, "vgg/w4@8px")]


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
    assert row["e2e_speedup"] == pytest.approx(first["baseline_latency_ms"] / first["latency_ms"])
    assert first["deploy"] == "vgg/w4@8px" and first["torch_latency_ms"] > 0 and first["torch_baseline_ms"] > 0
    assert "timing_note" in first  # None, or why the network timings are in doubt (a busy machine)
    assert {k["source"] for k in first["kernels"] + first["baseline_kernels"]} <= {"tuned", "database", "default kept"}
    operator_kernels = [k for k in first["kernels"] if k["kernel"].startswith("tessera_")]
    assert len(operator_kernels) == len(first["operator_kernels"]) >= 4  # one per layer size
    assert all(k["in_network_ms"] > 0 and k["alone_ms"] > 0 for k in first["operator_kernels"])
    assert first["replacement"]["replaced"] == 8  # every conv, the 3-channel stem too

    again, _ = evaluate("depthwise_separable", trials=0)
    assert {k["source"] for k in again["kernels"] + again["baseline_kernels"]} == {"database"}

    other, row = evaluate("grouped_conv", trials=0, transfer=False)  # its kernels were never tuned
    assert not other["score"]["e2e_tuned"] and all(k.startswith("tessera_") for k in other["untuned_kernels"])
    assert row["e2e_speedup"] is None  # no speedup without tuned kernels on both sides

    moved, _ = evaluate("depthwise_separable", trials=0, resolution=16)  # new sizes: transfer
    sources = {k["kernel"]: k["source"] for k in moved["kernels"] if k["kernel"].startswith("tessera_")}
    assert all(s.startswith("transfer:") or s == "default kept" for s in sources.values()), sources
