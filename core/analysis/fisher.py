"""Fisher Potential (NAS-PTE, Turner et al. 2021): how much a network can still learn,
judged at initialisation from one minibatch of real data, without training.

For one channel c of a layer's output activation A (N examples) and g = dLoss/dA,
    Delta_c = 1/(2N) * sum_n ( - sum_{i,j} A[n, c, i, j] * g[n, c, i, j] )^2
the layer's score is the sum over its channels and the network's the sum over the
measured (replaced) layers. Loss is the mean cross-entropy of the minibatch, with the
network in training mode (batch-norm uses batch statistics), as in the paper's code.
A candidate is rejected when its score is below the original network's over the same
layers. Torch is imported here: only worker processes and benchmarks use this module.

Two kinds of network have no meaningful score, and FisherError says which layer is why:
a layer whose activations or gradients are not finite (an operator that overflows at
initialisation), and a layer with a *constant channel*, one value at every position of
every example. Batch norm turns such a channel into its bias whatever the value, yet
Delta_c is then (value * sum_ij g)^2 / 2N, with g grown by up to 1/sqrt(eps) at each batch
norm the lost signal passes on the way: scores of 1e10 and far beyond that measure eps and
rounding, not capacity (operators that ignore their input, e.g. a softmax over a size-1
axis), and would rank such candidates first. All-zero channels score 0 and pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from core.errors import TesseraError

CONSTANT_TOLERANCE = 1e-6  # relative spread of a channel that is one value to float32 precision


class FisherError(TesseraError):
    """The network has no meaningful Fisher Potential: the message names the layer and why."""


@dataclass(frozen=True)
class FisherScore:
    total: float
    layers: dict[str, float]  # layer name -> its score


def fisher_potential(
    model: nn.Module, layer_names: Sequence[str], images: torch.Tensor, labels: torch.Tensor
) -> FisherScore:
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
    acts = [a.detach() for a in acts]
    scores = torch.stack([channel_scores(a, g).sum() for a, g in zip(acts, grads)])
    _check(layer_names, acts, grads, finite=bool(torch.isfinite(scores).all()))
    layers = dict(zip(layer_names, scores.tolist()))
    return FisherScore(sum(layers.values()), layers)


def channel_scores(activation: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """Delta_c for every channel of [N, C, H, W] activations and their gradients -> [C]."""
    per_example = -(activation * grad).sum(dim=(2, 3))  # [N, C]
    return per_example.pow(2).sum(dim=0) / (2 * activation.shape[0])


def constant_channels(activation: torch.Tensor) -> torch.Tensor:
    """Indices of the channels of [N, C, H, W] activations that hold one nonzero value at all of
    their (more than one) places, to float32 precision: max - min <= CONSTANT_TOLERANCE * max |value|."""
    flat = activation.transpose(0, 1).reshape(activation.shape[1], -1)
    if flat.shape[1] < 2:
        return torch.zeros(0, dtype=torch.long)
    top, bottom = flat.amax(dim=1), flat.amin(dim=1)
    size = torch.maximum(top.abs(), bottom.abs())
    return torch.nonzero((size > 0) & (top - bottom <= CONSTANT_TOLERANCE * size)).flatten()


def _check(names: Sequence[str], acts: Sequence[torch.Tensor], grads: Sequence[torch.Tensor], finite: bool) -> None:
    """FisherError naming the first layer (forward order) that leaves the network without a score.
    `finite`: the scores are (an inf or NaN anywhere makes them NaN), so only a non-finite score
    costs a pass over every tensor to find where."""
    for what, tensors in (("activations", acts), ("gradients", grads)) if not finite else ():
        for name, t in zip(names, tensors):
            bad = int((~torch.isfinite(t)).sum())
            if bad:
                raise FisherError(
                    f"layer {name}: {bad} of {t.numel()} {what} are inf or NaN at initialisation; "
                    "the network overflows, so it has no Fisher Potential"
                )
    for name, a in zip(names, acts):
        constant = constant_channels(a)
        if len(constant):
            c = int(constant[0])
            raise FisherError(
                f"layer {name}: {len(constant)} of {a.shape[1]} output channels hold one value for every "
                f"example and position (channel {c}: {float(a[0, c].flatten()[0]):.4g}): its output does not "
                "depend on its input there, and batch norm's eps, not the network, would set their "
                "Fisher Potential"
            )


def passes_fisher(candidate: float, original: float) -> bool:
    """NAS-PTE's legality rule for architecture-changing transformations."""
    return candidate >= original
