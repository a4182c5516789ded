"""Whole networks' FLOPs and the FLOPs-matched original (core.train.flops): the backbone's count is
the published one, a candidate's replaces each convolution's FLOPs by its operator's, and the
original narrowed by the width multiplier found computes the candidate's FLOPs within 10%, at the
proxy size and at the deployed ones."""

from __future__ import annotations

import itertools

import pytest

from core.data.specs import BackboneSpec
from core.ir.serialize import load_operator
from core.train.flops import STEPS, backbone_flops, flops_match, network_flops
from tests.support import EXAMPLES

ALL = ("standard", "pointwise", "strided")


def test_the_backbone_counts_its_convolutions_and_narrows_in_small_steps_at_the_deployed_width():
    assert backbone_flops(BackboneSpec("resnet18", 64, 32), 10) == 1_110_845_440  # CIFAR ResNet-18: 0.56 GMACs
    steps = [backbone_flops(BackboneSpec("resnet18", 64, 32, scale=k / STEPS), 10) for k in range(64, 80)]
    assert steps == sorted(steps)  # FLOPs grow with the multiplier
    assert max(b / a for a, b in itertools.pairwise(steps)) < 1.07  # one channel of the first stage at most


def test_a_candidate_costs_the_backbone_less_the_convolutions_it_replaces_plus_its_own():
    spec = BackboneSpec("resnet18", 16, 24, ALL)
    conv = load_operator(EXAMPLES / "conv2d.json")
    assert network_flops(spec, 10, conv) == network_flops(spec, 10, None) == backbone_flops(spec, 10)
    assert network_flops(spec, 10, load_operator(EXAMPLES / "shift_conv.json")) < backbone_flops(spec, 10) / 4


@pytest.mark.parametrize(
    ("operator", "width", "resolution"),
    [("shift_conv", 16, 24), ("involution", 64, 224)],
)
def test_the_width_scaled_original_computes_the_candidates_flops_within_10_percent(operator, width, resolution):
    spec = BackboneSpec("resnet18", width, resolution, ALL)
    found = flops_match(spec, 10, load_operator(EXAMPLES / f"{operator}.json"))
    assert found.original == backbone_flops(spec, 10) and found.flops < found.original / 2
    assert found.matched == backbone_flops(BackboneSpec("resnet18", width, resolution, ALL, found.scale), 10)
    assert abs(found.matched / found.flops - 1) <= 0.10
