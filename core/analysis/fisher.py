"""Fisher Potential (NAS-PTE, Turner et al. 2021): how much a network can still learn,
judged at initialisation from one minibatch of real data, without training.

For one channel c of a layer's output activation A (N examples) and g = dLoss/dA,
    Delta_c = 1/(2N) * sum_n ( - sum_{i,j} A[n, c, i, j] * g[n, c, i, j] )^2
the layer's score is the sum over its channels and the network's the sum over the
measured (replaced) layers. Loss is the mean cross-entropy of the minibatch, with the
network in training mode (batch-norm uses batch statistics), as in the paper's code.
A candidate is rejected when its score is below the original network's over the same
layers. Torch is imported here: only worker processes and benchmarks use this module.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class FisherScore:
    total: float
    layers: dict[str, float]  # layer name -> its score


def fisher_potential(model: nn.Module, layer_names: Sequence[str], images: torch.Tensor,
                     labels: torch.Tensor) -> FisherScore:
    """Score of the outputs of `layer_names` (module paths) from one forward and one backward pass."""
    modules = dict(model.named_modules())
    missing = [n for n in layer_names if n not in modules]
    if missing:
        raise KeyError(f"the network has no layer(s) {', '.join(missing)}")
    activations: dict[str, torch.Tensor] = {}

    def keep(name: str):
        def hook(module, args, output) -> None:
            activations[name] = output
        return hook

    hooks = [modules[n].register_forward_hook(keep(n)) for n in layer_names]
    was_training = model.training
    try:
        model.train()
        loss = F.cross_entropy(model(images), labels)
    finally:
        model.train(was_training)
        for h in hooks:
            h.remove()
    if not layer_names:
        return FisherScore(0.0, {})
    acts = [activations[n] for n in layer_names]
    grads = torch.autograd.grad(loss, acts)
    layers = {n: float(channel_scores(a.detach(), g).sum()) for n, a, g in zip(layer_names, acts, grads)}
    return FisherScore(sum(layers.values()), layers)


def channel_scores(activation: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """Delta_c for every channel of [N, C, H, W] activations and their gradients -> [C]."""
    per_example = -(activation * grad).sum(dim=(2, 3))  # [N, C]
    return per_example.pow(2).sum(dim=0) / (2 * activation.shape[0])


def passes_fisher(candidate: float, original: float) -> bool:
    """NAS-PTE's legality rule for architecture-changing transformations."""
    return candidate >= original
