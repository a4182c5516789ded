"""Hand-written torch for each bundled example operator: what a PyTorch user would write for
the same layer (torch's convolutions; involution as its authors' reference code does it:
unfold, multiply, sum). Each is built from a generated module's weights, put in torch's
layout once, so a benchmark can check that both compute the same before timing them;
hand_network does so for every replaced layer of a network."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from core.data.conv_fit import layer_bindings
from core.data.swap_convs import ReplacementReport
from core.ir.graph import OperatorGraph


class _Hand(nn.Module):
    def __init__(self, sizes: dict[str, int], **weights: torch.Tensor):
        super().__init__()
        self.sizes = sizes
        for name, w in weights.items():
            self.register_parameter(name, nn.Parameter(w.detach().clone().contiguous()))


class Conv2d(_Hand):
    def forward(self, x):
        return F.conv2d(x, self.w, padding=self.sizes["K"] // 2)


class GroupedConv(_Hand):
    def forward(self, x):
        return F.conv2d(x, self.w, padding=self.sizes["K"] // 2, groups=self.sizes["G"])


class DepthwiseSeparable(_Hand):
    def forward(self, x):
        y = F.conv2d(x, self.depthwise, padding=self.sizes["K"] // 2, groups=x.shape[1])
        return F.conv2d(y, self.pointwise)


class MixedConv(_Hand):
    def forward(self, x):
        return torch.cat((F.conv2d(x, self.wide, padding=self.sizes["K"] // 2), F.conv2d(x, self.point)), 1)


class ShiftConv(_Hand):
    def forward(self, x):
        return F.conv2d(torch.roll(x, 1, 2) + torch.roll(x, 1, 3), self.w)


class GatedSeparable(_Hand):
    def forward(self, x):
        k = self.sizes["K"]
        y = F.conv2d(x, self.vertical, padding=(k // 2, 0), groups=self.sizes["G"])
        y = torch.sigmoid(x.mean(1, keepdim=True)) * y
        return F.conv2d(y, self.horizontal, padding=(0, k // 2), groups=y.shape[1])


class Involution(_Hand):
    """Li et al.'s reference: kernel = 1x1 conv of x, [N, G, 1, K*K, H, W] times the unfolded
    input [N, G, C/G, K*K, H, W], summed over the window."""

    def forward(self, x):
        n, c, h, w = x.shape
        k, g = self.sizes["K"], self.sizes["G"]
        kernel = F.conv2d(x, self.kernel).view(n, g, 1, k * k, h, w)
        windows = F.unfold(x, k, padding=k // 2).view(n, g, c // g, k * k, h, w)
        return (kernel * windows).sum(3).view(n, c, h, w)


class SynoOperator1(_Hand):
    """Stage 1 an einsum over the W windows (each kw keeps its own weights), stage 2 a Kx1 conv."""

    def forward(self, x):
        n, c, h, w = x.shape
        k, g = self.sizes["K"], self.sizes["g"]
        windows = F.unfold(x, (1, k), padding=(0, k // 2)).view(n, g, c // g, k, h, w)
        y = torch.einsum("ngckhw,ogck->nogkhw", windows, self.w2).reshape(n, -1, h, w)
        return F.conv2d(y, self.w1, padding=(k // 2, 0))


class SynoOperator2(_Hand):
    """A grouped 1xK conv, its channels reordered (group-minor), a row shift, a Kx1 conv."""

    def forward(self, x):
        n, _, h, w = x.shape
        k, g = self.sizes["K"], self.sizes["g"]
        y = F.conv2d(x, self.w2, padding=(0, k // 2), groups=g)
        y = y.view(n, g, -1, h, w).transpose(1, 2).reshape(n, -1, h, w)
        return F.conv2d(torch.roll(y, -1, 2), self.w1, padding=(k // 2, 0))


def hand_written(name: str, generated: nn.Module, sizes: dict[str, int]) -> nn.Module:
    """The hand-written layer for example `name`, with `generated`'s weights (w_<node>)."""
    p = {k: v.detach() for k, v in generated.named_parameters()}
    c_in, k = sizes["C_in"], sizes.get("K", 1)
    c_out = sizes.get("C_out", c_in)
    if name == "conv2d":
        return Conv2d(sizes, w=p["w_share"])
    if name == "grouped_conv":
        return GroupedConv(sizes, w=p["w_grouped_fc"].reshape(c_out, -1, k, k))
    if name == "depthwise_separable":
        return DepthwiseSeparable(
            sizes, depthwise=p["w_depthwise"].reshape(c_in, 1, k, k), pointwise=p["w_pointwise"][..., None, None]
        )
    if name == "mixed_conv":
        return MixedConv(
            sizes, wide=p["w_conv_kxk"].reshape(c_out // 2, c_in, k, k), point=p["w_conv_1x1"][..., None, None]
        )
    if name == "shift_conv":
        return ShiftConv(sizes, w=p["w_pointwise"][..., None, None])
    if name == "gated_separable":
        return GatedSeparable(
            sizes,
            vertical=p["w_vertical"].reshape(c_out, -1, k, 1),
            horizontal=p["w_horizontal"].reshape(c_out, 1, 1, k),
        )
    if name == "involution":
        return Involution(sizes, kernel=p["w_kernel_fc"][..., None, None])
    g, s = sizes.get("g", 1), sizes.get("s", 1)
    o2 = c_out // g // s
    if name == "syno_operator1":  # W2 [O2, g, C/g, K], W1 [C_out, O2, g, K_w, K_h]
        w1 = p["w_share_w1"].reshape(c_out, o2 * g * k, k, 1)
        return SynoOperator1(sizes, w2=p["w_share_w2"], w1=w1)
    if name == "syno_operator2":  # W2 [O2, g, C/g, K], W1 [C_out, O2, g, K]
        w2 = p["w_share_w2"].permute(1, 0, 2, 3).reshape(g * o2, c_in // g, 1, k)
        return SynoOperator2(sizes, w2=w2, w1=p["w_share_w1"].reshape(c_out, o2 * g, k, 1))
    raise KeyError(f"no hand-written layer for example {name}")


def hand_network(network: nn.Module, report: ReplacementReport, graph: OperatorGraph, name: str) -> nn.Module:
    """A copy of `network` (whose convolutions replace_convs replaced by example `name`) with
    every generated module swapped for the hand-written layer, same weights."""
    hand = copy.deepcopy(network)
    for layer in report.layers:
        if layer.replaced:
            replaced = hand.get_submodule(layer.name)
            sizes = layer_bindings(graph, layer.shape)
            replaced.parts = nn.ModuleList(hand_written(name, part, sizes) for part in replaced.parts)
    return hand
