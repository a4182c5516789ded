"""Evaluate Accuracy's request (core.train.requests): the jobs it queues for an operator, the
best curve they early-stop against, refusals before anything is queued, and the accuracy curve
a training job keeps while it trains."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.data.datasets import DEFAULT_DATASET
from core.data.errors import DatasetError
from core.ir.serialize import content_hash, read_document
from core.jobs.queue import JobQueue
from core.jobs.submit import Subject, submit
from core.networks.settings import DeploySettings
from core.store import Store
from core.train.errors import EvaluationError
from core.train.handlers import train_job
from core.train.requests import AccuracyRequest
from core.train.settings import EvalSettings
from tests.support import EXAMPLES, Ctx

SETTINGS = EvalSettings(backbone="vgg", width=4, resolution=8, limit=100)


def test_training_and_tuned_timing_are_queued_against_the_best_stored_curve(tmp_path, operator_parses):
    doc = read_document(EXAMPLES / "depthwise_separable.json")
    deploy = DeploySettings(backbone="vgg", width=8, resolution=16, trials=4)
    request = AccuracyRequest(SETTINGS, epochs=2, max_batches=3, deploy=deploy, tuning_root=str(tmp_path))
    with Store(tmp_path / "r.db") as store:
        earlier = store.add_operator(read_document(EXAMPLES / "conv2d.json"), "conv2d")
        store.add_score(
            earlier,
            {
                "dataset": f"{DEFAULT_DATASET}@8px",
                "backbone": "vgg/w4",
                "epochs": 2,
                "accuracy": 0.8,
                "accuracy_per_epoch": [0.5, 0.8],
            },
        )
        read = len(operator_parses)
        ids = submit(store, replace(request, subjects=(Subject(doc, "dws", input_key="/some/file.json"),))).ids
        assert operator_parses[read:] == ["dws"]  # saved, versioned and planned from one reading
        jobs = [JobQueue(store).get(i) for i in ids]
    assert [j.kind for j in jobs] == ["train", "test", "e2e"] and {j.operator_name for j in jobs} == {"dws"}
    train, test, e2e = (j.payload for j in jobs)
    assert test["seeds"] == [1, 2, 3] and test["training"] == train["training"] and test["pair"]
    assert train["best_curve"] == [0.5, 0.8] and (train["training"]["epochs"], train["training"]["max_batches"]) == (
        2,
        3,
    )
    assert (train["settings"]["backbone"], train["settings"]["width"], train["settings"]["limit"]) == ("vgg", 4, 100)
    assert e2e["deploy"]["width"] == 8 and e2e["tuning_root"] == str(tmp_path.resolve())
    assert {j.input_version for j in jobs} == {content_hash(doc)}
    assert (
        request.describe()
        == "proxy training (2 epochs), test accuracy over 3 seeds and tuned end-to-end latency at vgg/w8@16px "
        f"in vgg/w4 on {DEFAULT_DATASET}@8px"
    )
    fisher = AccuracyRequest(SETTINGS, fisher_only=True, deploy=deploy)
    assert [p.kind for p in fisher.payloads(doc, None)] == ["fisher"]  # no training, so nothing to time


def test_bad_requests_are_refused_before_anything_is_queued(tmp_path):
    with pytest.raises(DatasetError, match="no such file or folder"):
        AccuracyRequest(EvalSettings(dataset=str(tmp_path / "nowhere")))
    with pytest.raises(EvaluationError, match="epochs must be a whole number >= 1"):
        AccuracyRequest(SETTINGS, epochs=0)
    with pytest.raises(EvaluationError, match="batches per epoch"):
        AccuracyRequest(SETTINGS, max_batches=0)
    with pytest.raises(EvaluationError, match="seeds must be a whole number >= 0, got -1"):
        AccuracyRequest(SETTINGS, seeds=-1)
    with pytest.raises(EvaluationError, match="training device must be one of auto, cpu, cuda"):
        AccuracyRequest(SETTINGS, device="gpu")


@pytest.mark.slow
def test_a_training_job_keeps_its_accuracy_curve_while_it_trains(operator_parses):
    doc = read_document(EXAMPLES / "depthwise_separable.json")
    ctx = Ctx()
    payload = AccuracyRequest(SETTINGS, epochs=2, max_batches=2).payloads(doc, None)[0]
    read = len(operator_parses)
    result = train_job(payload.to_dict(), ctx)
    assert operator_parses[read:] == ["the job's operator"]  # read once for the whole job
    curve = list(result.accuracy_per_epoch)
    assert ctx.partials == [
        {"accuracy_per_epoch": curve[:1], "epochs_planned": 2},
        {"accuracy_per_epoch": curve, "epochs_planned": 2},
    ]
