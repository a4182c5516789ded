"""Whole networks' FLOPs, and the original narrowed to a candidate's: the plain network that
saves the same FLOPs, which a speedup that only reflects fewer FLOPs is held against
(docs/papers.md, section 6).

FLOPs are counted forward at batch 1, 2 per multiply-add. The backbone's are torch's count
(torch.utils.flop_counter) of its convolutions and linear layer, on the meta device (shapes
only: no memory, no arithmetic, so a 224 px network costs no more than a small one); a
candidate's are the backbone's less each convolution an operator replaces, plus the operator's
own FLOPs at that layer (core.analysis, as the search's FLOPs budget counts them). The
FLOPs-matched original is the backbone under a width multiplier (BackboneSpec.scale) on a grid
of 1/STEPS, the one whose FLOPs are nearest the candidate's. Every layer's channels are rounded
on their own: at the deployed width (64) FLOPs follow the multiplier in steps under 7% (one
channel more in the first stage, most of the FLOPs), so the match is within 4% from x0.25; at a
proxy width of 16 and 24 px that stage has 4-8 channels, one channel is up to 37% of the
network's FLOPs, and the nearest match can be 15% off (the report prints both FLOPs; --train-width 64 trains at the deployed width).
Imports torch: worker processes and benchmarks."""

from __future__ import annotations

import math
from dataclasses import replace

import torch
from torch.utils.flop_counter import FlopCounterMode

from core.data.assignment import Assignment, as_assignment
from core.data.backbones import build_backbone
from core.data.specs import BackboneSpec
from core.data.swap_convs import conv_input_sizes, replace_convs
from core.ir.graph import OperatorGraph

from .per_layer import layer_flops
from .results import NetworkFlops

STEPS = (
    256  # the width multiplier's grid: k / STEPS, fine enough that at the deployed width FLOPs step by < 7% from x0.125
)


def backbone_flops(spec: BackboneSpec, num_classes: int) -> int:
    """The backbone's FLOPs at its width, multiplier and resolution."""
    with torch.device("meta"):
        model = build_backbone(spec, num_classes, seed=None).eval()
        example = torch.empty(1, 3, spec.resolution, spec.resolution)
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(example)
    return int(counter.get_total_flops())


def network_flops(spec: BackboneSpec, num_classes: int, stand_in: OperatorGraph | Assignment | None) -> int:
    """The backbone's FLOPs with the stand-in in every layer it fits (an assignment's operators
    in theirs; None: the backbone as it is)."""
    total = backbone_flops(spec, num_classes)
    if stand_in is None:
        return total
    with torch.device("meta"):
        model = build_backbone(spec, num_classes, seed=None)
    sizes = conv_input_sizes(model, spec.resolution)
    report = replace_convs(model, stand_in, spec.resolution, sizes=sizes, kinds=spec.replace)
    plan = as_assignment(stand_in, [layer.name for layer in report.layers])
    for layer in (o for o in report.layers if o.replaced):
        shape = layer.shape
        h, w = shape.operator_size
        graph = plan.operator_at(layer.name)
        assert graph is not None  # replaced: an operator stands in for it
        total += layer_flops(graph, shape) - 2 * shape.c_in * shape.c_out * shape.kernel**2 * h * w
    return total


def matched_scale(spec: BackboneSpec, num_classes: int, flops: int) -> tuple[float, int]:
    """The width multiplier k / STEPS (k <= STEPS) whose backbone's FLOPs are nearest `flops`
    (by ratio), and those FLOPs. FLOPs grow with the multiplier: a bisection finds the first
    at or above `flops`, then the nearer of it and the one below."""

    def at(k: int) -> int:
        return backbone_flops(replace(spec, scale=k / STEPS), num_classes)

    low, high = 1, STEPS
    if at(high) <= flops:
        return 1.0, at(high)
    while low < high:
        middle = (low + high) // 2
        if at(middle) >= flops:
            high = middle
        else:
            low = middle + 1
    nearest = min({max(high - 1, 1), high}, key=lambda k: abs(math.log(at(k) / flops)))
    return nearest / STEPS, at(nearest)


def flops_match(spec: BackboneSpec, num_classes: int, stand_in: OperatorGraph | Assignment | None) -> NetworkFlops:
    """The network's FLOPs, the original's (spec at multiplier 1), and the original narrowed to
    about the network's FLOPs."""
    flops = network_flops(spec, num_classes, stand_in)
    scale, matched = matched_scale(spec, num_classes, flops)
    return NetworkFlops(flops, backbone_flops(replace(spec, scale=1.0), num_classes), scale, matched)
