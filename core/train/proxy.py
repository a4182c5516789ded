"""Proxy training: a few epochs of SGD on the training split, accuracy on the validation
split after each, stopped early by Canvas's rule when a best curve is known. It reads the
split's training and validation parts only, never its test part (core.train.seeds reports on
that). It runs where TrainConfig's device says (core.train.device), with mixed precision when
asked."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.data.datasets import ImageDataset, Split

from .device import training_device
from .early_stop import keep_training, required_accuracy
from .settings import TrainConfig

Progress = Callable[[float, str], None]
CHANCE_FACTOR = 1.5  # a final accuracy under 1.5x chance (1 / classes) is a network that did not learn
EXPLODED = 1e6  # logits this large mean the activations exploded (a trained classifier's are ~10-100)


@dataclass
class TrainingRun:
    """The accuracy after every epoch so far, and how the run ended (`outcome`, one of
    core.train.results.OUTCOMES; `reason` says why when not 'trained')."""

    accuracy_per_epoch: list[float]
    seconds_per_epoch: list[float]
    reason: str = ""
    outcome: str = "trained"

    @property
    def accuracy(self) -> float | None:
        """The final accuracy; None when training diverged (its last accuracy says nothing)."""
        return None if self.outcome == "diverged" or not self.accuracy_per_epoch else self.accuracy_per_epoch[-1]


def accuracy(model: nn.Module, data: ImageDataset, batch_size: int = 256, amp: bool = False) -> float:
    """Top-1 accuracy of `model` (in eval mode, on the device its parameters are on) on `data`."""
    device = next(model.parameters()).device
    model.eval()
    correct = 0
    with torch.no_grad(), torch.autocast(device.type, enabled=amp):
        for start in range(0, len(data), batch_size):
            x = torch.from_numpy(data.images[start : start + batch_size]).to(device)
            y = torch.from_numpy(data.labels[start : start + batch_size]).to(device)
            correct += int((model(x).argmax(dim=1) == y).sum())
    return correct / len(data)


def train_proxy(
    model: nn.Module,
    split: Split,
    config: TrainConfig,
    best: Sequence[float] | None = None,
    progress: Progress | None = None,
    epoch_done: Callable[[list[float]], None] | None = None,
) -> TrainingRun:
    """Train `model` in place; `progress(fraction, message)` is called after every batch
    (a job's ctx.progress, which raises to stop a cancelled job), `epoch_done(accuracies so
    far)` after every epoch (e.g. to show the accuracy curve while it grows). A loss that is no longer
    finite or logits that explode end training as "diverged"; a final accuracy near chance is
    "did not learn" (TrainingRun.outcome), so neither reads as an ordinary low accuracy. From the
    second step on, an epoch projected to take longer than config.max_epoch_seconds ends it as
    "too slow". The model moves to the configured device (TrainConfig.device: EvaluationError
    when it asks for a GPU this machine lacks)."""
    device = training_device(config.device, config.amp)
    model.to(device)
    train = split.train
    images, labels = torch.from_numpy(train.images).to(device), torch.from_numpy(train.labels).to(device)
    scaler = torch.amp.GradScaler(device.type, enabled=config.amp)
    steps_per_epoch = math.ceil(len(train) / config.batch_size)
    if config.max_batches is not None:
        steps_per_epoch = min(steps_per_epoch, config.max_batches)
    optimizer = torch.optim.SGD(
        model.parameters(),
        lr=config.lr,
        momentum=config.momentum,
        weight_decay=config.weight_decay,
        nesterov=config.momentum > 0,
    )
    scheduler: torch.optim.lr_scheduler.LRScheduler
    if config.schedule == "cosine":
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, config.epochs * steps_per_epoch)
    else:
        milestones = [int(config.epochs * f) * steps_per_epoch for f in (0.5, 0.75)]
        scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones, gamma=0.1)
    order = np.random.default_rng(config.seed)
    result = TrainingRun([], [])
    for epoch in range(1, config.epochs + 1):
        start = time.perf_counter()
        model.train()
        permutation = order.permutation(len(train))
        for step in range(steps_per_epoch):
            index = torch.from_numpy(permutation[step * config.batch_size : (step + 1) * config.batch_size])
            index = index.to(device)
            with torch.autocast(device.type, enabled=config.amp):
                logits = model(images[index])
                loss = F.cross_entropy(logits, labels[index])
            why = _divergence(loss, logits)
            if why:
                result.outcome = "diverged"
                result.reason = f"diverged at epoch {epoch}, step {step + 1}: {why} (learning rate {config.lr})"
                return result
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            if step and config.max_epoch_seconds is not None:
                projected = (time.perf_counter() - start) / (step + 1) * steps_per_epoch
                if projected > config.max_epoch_seconds:
                    result.outcome = "too slow"
                    result.reason = (
                        f"too slow to train: epoch {epoch} would take about {projected:.0f} s (after {step + 1} "
                        f"of {steps_per_epoch} steps), over the limit of {config.max_epoch_seconds:.0f} s"
                    )
                    return result
            if progress is not None:
                done = (epoch - 1 + (step + 1) / steps_per_epoch) / config.epochs
                progress(done, f"epoch {epoch}/{config.epochs}, loss {loss.item():.3f}")
        acc = accuracy(model, split.val, amp=config.amp)
        result.accuracy_per_epoch.append(acc)
        result.seconds_per_epoch.append(time.perf_counter() - start)
        if progress is not None:
            progress(epoch / config.epochs, f"epoch {epoch}/{config.epochs}: accuracy {acc:.3f}")
        if epoch_done is not None:
            epoch_done(list(result.accuracy_per_epoch))
        curve, floor = result.accuracy_per_epoch, CHANCE_FACTOR / split.train.num_classes
        if epoch < config.epochs and best and not keep_training(curve, config.epochs, best, config.theta, floor):
            need = required_accuracy(epoch, config.epochs, best, config.theta)
            if epoch == 1 and floor < need:
                why = f"{floor:.3f}, {CHANCE_FACTOR:g}x chance: it learned nothing"
            else:
                why = f"{need:.3f} (lambda x best {max(best[:epoch]):.3f}, theta {config.theta})"
            result.reason = (
                f"stopped after epoch {epoch}: accuracy {max(curve):.3f} (the highest so far) is below {why}"
            )
            result.outcome = "stopped early"
            break
    chance = 1 / split.train.num_classes
    if result.outcome == "trained" and result.accuracy_per_epoch[-1] < CHANCE_FACTOR * chance:
        result.outcome = "did not learn"
        result.reason = (
            f"accuracy {result.accuracy_per_epoch[-1]:.3f} after {config.epochs} epochs is near chance "
            f"({chance:.3f}): the network did not learn"
        )
    return result


def _divergence(loss: torch.Tensor, logits: torch.Tensor) -> str:
    """Why this step shows training has diverged, or "" when it has not."""
    if not torch.isfinite(loss):
        return f"the loss is {loss.item()}"
    peak = float(logits.detach().abs().max())
    return f"logits reached {peak:.3g}: the activations exploded" if peak > EXPLODED else ""
