"""Backbones build at any width and resolution, deterministically; replacement of their
standard convolutions by every example operator, with a report that says why not."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from core.data.backbones import BACKBONES, build_backbone
from core.data.conv_fit import ConvShape, layer_bindings
from core.data.errors import BackboneError
from core.data.specs import BACKBONE_NAMES, BackboneSpec
from core.data.swap_convs import ReplacedConv, replace_convs
from core.ir.serialize import load_operator
from tests.support import EXAMPLES

torch.set_num_threads(1)
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.json"))


def test_names_agree_and_specs_are_checked():
    assert set(BACKBONES) == set(BACKBONE_NAMES)
    with pytest.raises(BackboneError, match="unknown backbone 'resnet50'; choose one of resnet18"):
        BackboneSpec("resnet50")
    with pytest.raises(BackboneError, match="width must be an integer >= 1"):
        BackboneSpec("vgg", width=0)
    with pytest.raises(BackboneError, match="resolution must be an integer >= 8"):
        BackboneSpec("vgg", resolution=4)
    with pytest.raises(BackboneError, match="number of classes"):
        build_backbone(BackboneSpec("vgg"), 1)
    assert BackboneSpec("resnet34", 8).label == "resnet34/w8"


@pytest.mark.parametrize("name", BACKBONE_NAMES)
@pytest.mark.parametrize("width, resolution", [(4, 8), (8, 16)])
def test_backbones_build_and_run(name, width, resolution):
    spec = BackboneSpec(name, width, resolution)
    net, again = build_backbone(spec, 10, seed=1), build_backbone(spec, 10, seed=1)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), again.state_dict().values()))
    assert net(torch.randn(2, 3, resolution, resolution)).shape == (2, 10)


def test_backbone_shapes_follow_the_published_layouts():
    r18, r34 = (build_backbone(BackboneSpec(n, 8), 10) for n in ("resnet18", "resnet34"))
    assert len(r18.layers) == 8 and len(r34.layers) == 16
    assert r18.head[-1].in_features == 64  # 8 * 2^3
    mobile = build_backbone(BackboneSpec("mobilenetv2", 32), 10)
    depthwise = [m for m in mobile.modules() if isinstance(m, nn.Conv2d) and m.groups == m.in_channels > 1]
    assert len(depthwise) == 17  # one per inverted residual block
    assert mobile.head[-1].in_features == 1280


def test_a_resnet_takes_the_stem_its_input_size_calls_for():
    """At ImageNet's size ResNet-18 is the published network (7x7/2 stem and max-pool: the first
    stage at 56x56, 1.82 G multiply-adds with 1000 classes); below it CIFAR's 3x3 stem keeps
    every pixel (at 224 px that would be 15x the FLOPs of what users deploy)."""
    from core.train.flops import backbone_flops

    imagenet = build_backbone(BackboneSpec("resnet18", 64, 224), 1000)
    first = imagenet.stem(torch.randn(1, 3, 224, 224))
    assert first.shape == (1, 64, 56, 56) and imagenet.stem[0].kernel_size == (7, 7)
    assert backbone_flops(BackboneSpec("resnet18", 64, 224), 1000) == pytest.approx(2 * 1.82e9, rel=0.01)
    cifar = build_backbone(BackboneSpec("resnet18", 64, 32), 10)
    assert cifar.stem(torch.randn(1, 3, 32, 32)).shape == (1, 64, 32, 32) and cifar.stem[0].kernel_size == (3, 3)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("name", BACKBONE_NAMES)
def test_every_example_operator_in_every_backbone(path, name):
    graph = load_operator(path)
    # Syno's operators fix g=32 groups: MobileNetV2's channels divide by 32 from width 32 on
    spec = BackboneSpec(name, 32 if name == "mobilenetv2" else 8, 16)
    net = build_backbone(spec, 10)
    convs = {n: m for n, m in net.named_modules() if isinstance(m, nn.Conv2d)}
    report = replace_convs(net, graph, spec.resolution)
    modules = dict(net.named_modules())
    assert [o.name for o in report.layers] == list(convs)  # every conv is in the report
    assert report.replaced, "\n".join(report.lines())
    for outcome in report.layers:
        conv = convs[outcome.name]
        assert (outcome.c_in, outcome.c_out, outcome.kernel) == (
            conv.in_channels,
            conv.out_channels,
            conv.kernel_size[0],
        )
        if outcome.replaced:
            assert isinstance(modules[outcome.name], ReplacedConv)
            assert conv.stride == (1, 1) and conv.groups == 1
        else:
            assert modules[outcome.name] is conv and outcome.detail
            if conv.groups > 1:
                assert outcome.detail == "depthwise conv"
            elif conv.stride != (1, 1):
                assert ", stride 2: strided convolutions are not replaced here" in outcome.detail
    out = net(torch.randn(2, 3, 16, 16))
    assert out.shape == (2, 10) and torch.isfinite(out).all()
    out.sum().backward()  # the operators' weights train
    assert all(p.grad is not None for n, p in net.named_parameters() if n.startswith(tuple(report.replaced)))
    assert f"replaced {len(report.replaced)} of {len(report.layers)}" in report.lines()[0]


def test_composition_when_channel_counts_differ():
    involution = load_operator(EXAMPLES / "involution.json")  # [C_in, H, W] -> [C_in, H, W]
    net = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.Conv2d(16, 4, 1), nn.Conv2d(4, 6, 3, padding=1))
    report = replace_convs(net, involution, 8, in_channels=8)
    details = {o.name: (o.replaced, o.detail) for o in report.layers}
    assert details["0"] == (True, "2 copies concatenated")
    assert details["1"] == (True, "K=1, sum of 4 channel groups")  # a 1x1 layer binds the window to 1
    assert details["2"] == (False, "operator gives 4 channels, the layer needs 6 (neither divides the other)")
    assert len(net[0].parts) == 2 and net[1].bias is not None  # a conv's bias is kept
    assert net(torch.randn(3, 8, 8, 8)).shape == (3, 6, 8, 8)
    assert net[1](torch.randn(2, 16, 8, 8)).is_contiguous()  # NCHW like a conv, whatever einsum gave


class Unusual(nn.Module):
    """Convolutions of every non-standard kind, and one that forward never calls."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.Conv2d(8, 8, 3, padding=2, dilation=2),
            nn.Conv2d(8, 8, (3, 1), padding=(1, 0)),
            nn.Conv2d(8, 8, 2, padding=1),
            nn.Conv2d(8, 8, 3, padding=0),
            nn.Conv2d(8, 8, 3, padding=1, groups=2),
        )
        self.unused = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.body(x)


def test_non_standard_convs_and_binding_errors_are_explained():
    grouped = load_operator(EXAMPLES / "grouped_conv.json")  # G = 4 by default
    net = Unusual()
    report = replace_convs(net, grouped, 12)
    reasons = [o.detail for o in report.layers]
    assert reasons[0].startswith("binding error: ") and "27/4 is not an integer" in reasons[0]
    assert reasons[1] == "dilation (2, 2)"
    assert reasons[2] == "kernel 3x1 is not square and odd"
    assert reasons[3] == "kernel 2x2 is not square and odd"
    assert reasons[4].startswith("padding (0, 0)")
    assert reasons[5] == "grouped conv (groups=2)"
    assert reasons[6] == "not used in the forward pass"
    assert not report.replaced


def test_layer_bindings_take_sizes_from_the_layer_and_coefficients_from_the_operator():
    graph = load_operator(EXAMPLES / "gated_separable.json")
    assert layer_bindings(graph, ConvShape(16, 32, 8, 6, 5)) == {
        "C_in": 16,
        "C_out": 32,
        "H": 8,
        "W": 6,
        "K": 5,
        "G": 4,
    }
    shift = load_operator(EXAMPLES / "shift_conv.json")  # no K: a 1x1 or 5x5 layer binds the same
    assert "K" not in layer_bindings(shift, ConvShape(8, 8, 4, 4, 5))
