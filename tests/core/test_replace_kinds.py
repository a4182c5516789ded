"""Which convolutions an operator stands in for: strided ones (every s-th row and column of the
input, then the operator) and pointwise ones (K bound to 1) when asked, with the right shapes,
a training step, FLOPs of the operator at the output's size, and a reason for each one kept."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from core.data.backbones import build_backbone
from core.data.conv_fit import ConvShape
from core.data.errors import BackboneError
from core.data.specs import DEFAULT_REPLACE, REPLACE_KINDS, BackboneSpec
from core.data.swap_convs import ReplacedConv, replace_convs, searched_layers
from core.ir.serialize import load_operator
from core.networks.settings import DeploySettings
from core.train.per_layer import layer_flops
from core.train.settings import EvalSettings
from tests.support import EXAMPLES, chain

torch.set_num_threads(1)
ALL = tuple(REPLACE_KINDS)
SPEC = BackboneSpec("resnet18", 8, 16, ALL)
DWS, CONV = load_operator(EXAMPLES / "depthwise_separable.json"), load_operator(EXAMPLES / "conv2d.json")


def outputs(net: nn.Module, x: torch.Tensor, names: list[str]) -> dict[str, torch.Size]:
    """The output shape of each named module on input x."""
    shapes: dict[str, torch.Size] = {}

    def keep(name: str):
        def hook(module, args, out) -> None:  # returning nothing keeps the output
            shapes[name] = out.shape

        return hook

    hooks = [net.get_submodule(n).register_forward_hook(keep(n)) for n in names]
    net(x)
    for h in hooks:
        h.remove()
    return shapes


def test_strided_and_pointwise_convolutions_stand_in_when_asked_and_train():
    net, original = build_backbone(SPEC, 10, seed=0), build_backbone(SPEC, 10, seed=0)
    report = replace_convs(net, DWS, SPEC.resolution, kinds=SPEC.replace)
    strided = [o for o in report.layers if o.stride == 2]
    assert len(strided) == 6 and all(o.replaced for o in strided)  # 3 first convs of a stage, 3 shortcuts
    details = {o.name: o.detail for o in report.layers}
    assert details["layers.2.conv1"] == "input subsampled by 2 (stride 2) to 8x8, direct"
    assert details["layers.2.shortcut.0"] == "input subsampled by 2 (stride 2) to 8x8, K=1, direct"
    assert "k1 s2" in next(line for line in report.lines() if "layers.2.shortcut.0" in line)
    x = torch.randn(2, 3, 16, 16)
    names = [o.name for o in strided]
    assert outputs(net, x, names) == outputs(original, x, names)  # each gives what its conv gave
    kept = build_backbone(SPEC, 10, seed=0)
    assert not any(o.stride == 2 for o in replace_convs(kept, DWS, SPEC.resolution).layers if o.replaced)

    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    before = {n: net.get_submodule(n).parts[0].state_dict() for n in names}
    before = {n: {k: v.clone() for k, v in d.items()} for n, d in before.items()}
    loss = nn.functional.cross_entropy(net(x), torch.tensor([1, 2]))
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss)
    for n in names:  # every strided layer's operator learned
        after = net.get_submodule(n).parts[0].state_dict()
        assert any(not torch.equal(after[k], before[n][k]) for k in after)


def test_a_strided_pointwise_conv_is_exact_and_flops_are_those_at_the_output_size():
    conv = nn.Conv2d(8, 16, 1, stride=2, bias=False)
    net = nn.Sequential(conv)
    report = replace_convs(net, CONV, 10, in_channels=8, kinds=ALL)
    assert report.layers[0].detail == "input subsampled by 2 (stride 2) to 5x5, K=1, direct"
    replaced = net[0]
    assert isinstance(replaced, ReplacedConv)
    (weight,) = replaced.parts[0].parameters()
    with torch.no_grad():
        weight.copy_(conv.weight.reshape(weight.shape))
    x = torch.randn(2, 8, 10, 10)
    torch.testing.assert_close(net(x), conv(x))  # a 1x1 conv on every other pixel is the strided conv

    full, strided, half = ConvShape(8, 16, 16, 16, 3), ConvShape(8, 16, 16, 16, 3, 2), ConvShape(8, 16, 8, 8, 3)
    assert layer_flops(CONV, strided) == layer_flops(CONV, half) == layer_flops(CONV, full) // 4
    assert layer_flops(DWS, strided) == layer_flops(DWS, half) < layer_flops(CONV, strided) / 4


def test_kinds_are_named_checked_labelled_and_kept_layers_say_why():
    assert BackboneSpec("resnet18", 8, 16).label == "resnet18/w8"  # the default labels as before
    assert SPEC.label == "resnet18/w8[standard,pointwise,strided]"
    assert BackboneSpec("vgg", replace="strided, standard").replace == ("standard", "strided")
    with pytest.raises(BackboneError, match="some of standard, pointwise, strided, got 'dilated'"):
        BackboneSpec("vgg", replace=["dilated"])
    settings = EvalSettings.from_payload({"replace": ["strided", "standard", "pointwise"]})
    assert settings.replace == ALL and settings.spec == BackboneSpec("resnet18", 16, settings.resolution, ALL)
    assert hash(settings)  # screens are cached per setting
    assert "replace" not in DeploySettings().to_payload()  # a run's key from before stays its key
    assert DeploySettings.from_payload(DeploySettings(replace=ALL).to_payload()).spec.replace == ALL

    every_third = chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("u", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("st", "stride", {"dim": 1, "S": 3}, ["u"]),
            ("sh", "share", {"dims": [0, 1], "out": "C_out"}, ["st"]),
            ("r1", "reduce", {"dim": 1}, ["sh"]),
            ("r2", "reduce", {"dim": 1}, ["r1"]),
        ],
        {"C_in": "primary", "C_out": "primary", "H": "primary", "W": "primary", "K": "coefficient"},
        {"K": 3},
    )

    def net():
        return nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1), nn.Conv2d(8, 8, 3, 2, 1))

    report = replace_convs(net(), every_third, 8, in_channels=8, kinds=("standard",))
    assert [o.replaced for o in report.layers] == [True, False, False]
    assert report.layers[1].detail == "1x1: pointwise convolutions are not replaced here (replaced: standard)"
    assert report.layers[2].detail == ("3x3, stride 2: strided convolutions are not replaced here (replaced: standard)")
    report = replace_convs(net(), every_third, 8, in_channels=8, kinds=ALL)
    assert report.layers[1].detail.startswith(
        "it is meaningless with a window of one: binding error at K=1 (a 1x1 convolution), not at its own K=3"
    )


def test_the_search_sizes_candidates_at_the_strided_layers_too():
    default, wider = searched_layers(BackboneSpec("resnet18", 8, 16)), searched_layers(SPEC)
    assert all(layer.stride == 1 for layer in default) and DEFAULT_REPLACE == ("standard", "pointwise")
    assert wider - default == {
        ConvShape(8, 16, 16, 16, 3, 2): 1,
        ConvShape(8, 16, 16, 16, 1, 2): 1,
        ConvShape(16, 32, 8, 8, 3, 2): 1,
        ConvShape(16, 32, 8, 8, 1, 2): 1,
        ConvShape(32, 64, 4, 4, 3, 2): 1,
        ConvShape(32, 64, 4, 4, 1, 2): 1,
    }
