"""Canvas's early-stop rule, the best curve read from a real store, and the proxy-training loop."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

from core.data.backbones import build_backbone
from core.data.datasets import load_dataset, split_dataset
from core.data.specs import BackboneSpec
from core.ir.serialize import read_document
from core.store import Store
from core.train.early_stop import best_curve, check_theta, keep_training, required_accuracy
from core.train.errors import EvaluationError
from core.train.proxy import TrainConfig, accuracy, train_proxy
from tests.support import EXAMPLES

torch.set_num_threads(1)


def test_lambda_grows_from_theta_to_one():
    best = [0.5, 0.6, 0.8, 0.9]
    # lambda(e) = theta + (1 - theta) * e / E with theta 0.5, E 4: 0.625, 0.75, 0.875, 1.0
    assert [required_accuracy(e, 4, best) for e in (1, 2, 3, 4)] == pytest.approx(
        [0.625 * 0.5, 0.75 * 0.6, 0.875 * 0.8, 0.9]
    )
    assert required_accuracy(2, 4, best, theta=0.0) == pytest.approx(0.5 * 0.6)
    assert required_accuracy(1, 4, best, theta=1.0) == pytest.approx(0.5)
    assert keep_training([0.3, 0.45], 4, best) and not keep_training([0.3, 0.44], 4, best)
    assert keep_training([0.0], 4, None) and keep_training([0.0] * 3, 4, [0.9])  # no curve to compare
    # the highest so far on both sides: one epoch that falls does not stop a run, nor lower the bar
    assert keep_training([0.5, 0.2], 4, best) and not keep_training([0.3, 0.44], 4, [0.6, 0.1])
    with pytest.raises(EvaluationError, match="theta must be a number between 0 and 1"):
        check_theta(1.5)


def test_best_curve_is_the_best_finished_run_of_the_same_setting(tmp_path):
    with Store(tmp_path / "s.db") as store:
        op = store.add_operator(read_document(EXAMPLES / "conv2d.json"))
        assert best_curve(store, "digits@16px", "resnet18/w8", 3) is None
        for curve in ([0.5, 0.6, 0.7], [0.6, 0.8, 0.85], [0.9, 0.95]):  # the last stopped early
            store.add_score(
                op,
                {
                    "dataset": "digits@16px",
                    "backbone": "resnet18/w8",
                    "epochs": len(curve),
                    "accuracy": curve[-1],
                    "accuracy_per_epoch": curve,
                },
            )
        store.add_score(
            op,
            {
                "dataset": "digits@16px",
                "backbone": "vgg/w8",
                "epochs": 3,
                "accuracy": 0.99,
                "accuracy_per_epoch": [0.99, 0.99, 0.99],
            },
        )
        assert best_curve(store, "digits@16px", "resnet18/w8", 3) == [0.6, 0.8, 0.85]
        assert best_curve(store, "digits@32px", "resnet18/w8", 3) is None


@pytest.fixture(scope="module")
def tiny_split():
    return split_dataset(load_dataset("digits", 8), 0.2, seed=0, limit=300)


def test_training_learns_and_reports_every_epoch(tiny_split):
    net = build_backbone(BackboneSpec("vgg", 4, 8), 10, seed=0)
    before = accuracy(net, tiny_split.val)
    seen = []
    result = train_proxy(
        net,
        tiny_split,
        TrainConfig(epochs=3, batch_size=32, lr=0.05),
        progress=lambda fraction, message: seen.append((fraction, message)),
    )
    assert len(result.accuracy_per_epoch) == len(result.seconds_per_epoch) == 3 and result.outcome == "trained"
    assert result.accuracy > max(before, 0.3)  # 10 classes: chance is 0.1
    assert seen[-1][0] == pytest.approx(1.0) and "epoch 3/3: accuracy" in seen[-1][1]
    assert all(a <= b for (a, _), (b, _) in itertools.pairwise(seen))


def test_early_stop_against_a_better_curve(tiny_split):
    net = build_backbone(BackboneSpec("vgg", 4, 8), 10, seed=0)
    config = TrainConfig(epochs=4, batch_size=32, max_batches=2, schedule="step", theta=0.9)
    result = train_proxy(net, tiny_split, config, best=[1.0, 1.0, 1.0, 1.0])
    assert result.outcome == "stopped early" and len(result.accuracy_per_epoch) <= 2
    epoch = len(result.accuracy_per_epoch)
    assert f"stopped after epoch {epoch}" in result.reason and ("theta 0.9" in result.reason or epoch == 1)
    net = build_backbone(BackboneSpec("vgg", 4, 8), 10, seed=0)
    lenient = train_proxy(
        net, tiny_split, TrainConfig(epochs=2, batch_size=32, max_batches=2, theta=0.0), best=[0.0, 0.0]
    )
    assert lenient.outcome != "stopped early" and len(lenient.accuracy_per_epoch) == 2


@pytest.mark.parametrize(
    "change, message",
    [
        ({"epochs": 0}, "epochs must be a whole number >= 1"),
        ({"batch_size": 2.5}, "batch_size"),
        ({"lr": -1.0}, "lr must be a number >= 0"),
        ({"schedule": "linear"}, "'cosine' or 'step'"),
        ({"theta": -0.1}, "theta"),
        ({"max_batches": 0}, "max_batches"),
        ({"max_epoch_seconds": 0}, "max_epoch_seconds must be a number > 0"),
        ({"max_epoch_seconds": float("inf")}, "max_epoch_seconds"),
    ],
)
def test_bad_training_settings(change, message):
    with pytest.raises(EvaluationError, match=message):
        TrainConfig(**change)


def test_divergence_and_failing_to_learn_are_outcomes_not_low_accuracies(tiny_split):
    still = TrainConfig(epochs=1, lr=0.0, momentum=0.0, weight_decay=0.0, max_batches=2)
    result = train_proxy(build_backbone(BackboneSpec("vgg", 4, 8), 10, seed=0), tiny_split, still)
    assert result.outcome == "did not learn" and "near chance (0.100)" in result.reason
    assert result.accuracy == result.accuracy_per_epoch[-1] < 0.15

    wild = TrainConfig(epochs=2, lr=1e30, momentum=0.0, weight_decay=0.0, max_batches=5)
    result = train_proxy(build_backbone(BackboneSpec("vgg", 4, 8), 10, seed=0), tiny_split, wild)
    assert result.outcome == "diverged" and result.accuracy is None
    assert result.reason.startswith("diverged at epoch 1, step ") and "learning rate 1e+30" in result.reason

    loud = nn.Sequential(build_backbone(BackboneSpec("vgg", 4, 8), 10, seed=0), Scale(1e8))
    result = train_proxy(loud, tiny_split, still)
    assert result.outcome == "diverged" and "the activations exploded" in result.reason


def test_an_epoch_projected_over_the_limit_ends_the_run_as_too_slow(tiny_split):
    net = build_backbone(BackboneSpec("vgg", 4, 8), 10, seed=0)
    seen = []
    config = TrainConfig(epochs=2, batch_size=16, max_epoch_seconds=1e-6)
    result = train_proxy(net, tiny_split, config, progress=lambda fraction, message: seen.append(fraction))
    assert result.outcome == "too slow" and result.accuracy is None and not result.accuracy_per_epoch
    assert len(seen) == 1  # judged from the second step: the first may pay for warming up
    assert (
        result.reason.startswith("too slow to train: epoch 1 would take about")
        and "after 2 of 15 steps" in result.reason
    )
    roomy = train_proxy(net, tiny_split, TrainConfig(epochs=1, batch_size=16, max_batches=3, max_epoch_seconds=600))
    assert roomy.outcome != "too slow" and len(roomy.accuracy_per_epoch) == 1


class Scale(nn.Module):
    """Logits blown up by a constant: activations that explode without a NaN loss."""

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor
