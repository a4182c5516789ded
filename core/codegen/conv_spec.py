"""Convolutions described the way torch describes them, from an nn.Conv2d or from an operator.

One description (ConvSpec: channels, kernel, stride, padding, groups, dilation) serves
both directions in which Tessera matches convolutions: replacing a backbone's conv
layers by an operator (core.data.replace asks a layer's spec whether it is standard)
and running an operator with a convolution algorithm such as GSPC (match_conv reads the
spec off the operator's graph). Importing this module imports neither torch nor TVM.

An operator is a 2-D convolution when its live steps form one chain from the input
[C, H, W] to the output: at most one unfold per spatial axis (the window; zero padding
K//2 before, as README's unfold), strides on spatial axes after their unfold, and one
contraction over the channel axes: fc(out, groups) with groups dividing C (grouped conv),
or share over every channel axis with reduces over the same axes (standard conv)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import prod

import numpy as np

from ..analysis.shapes import label
from ..ir.graph import INPUT, OperatorGraph
from ..ir.primitives import FullyConnected, Share
from ..ir.primitives.views import Stride, Unfold
from ..ir.tensor import TensorType
from .errors import CodegenError
from .torch_plan import Plan, Step, make_plan


class NotAConvolution(CodegenError):
    """The operator is not a (grouped) 2-D convolution; the message names the node that says so."""


@dataclass(frozen=True)
class ConvSpec:
    """A 2-D convolution with torch's parameters. `padding` is the zeros added before each
    spatial axis (torch also adds them after; an operator adds what its output size needs)
    or a string such as "same" as an nn.Conv2d may hold it."""

    in_channels: int
    out_channels: int
    kernel: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] | str = (0, 0)
    groups: int = 1
    dilation: tuple[int, int] = (1, 1)
    padding_mode: str = "zeros"

    @classmethod
    def of_module(cls, conv) -> ConvSpec:
        """The spec of an nn.Conv2d (read by attribute, so torch is not imported here)."""
        return cls(
            conv.in_channels,
            conv.out_channels,
            tuple(conv.kernel_size),
            tuple(conv.stride),
            conv.padding if isinstance(conv.padding, str) else tuple(conv.padding),
            conv.groups,
            tuple(conv.dilation),
            conv.padding_mode,
        )

    def why_not_standard(self) -> str:
        """Why this is not a standard conv (groups 1, stride 1, dilation 1, a square odd kernel,
        zero "same" padding), or "" when it is one."""
        kh, kw = self.kernel
        if self.groups != 1:
            return "depthwise conv" if self.groups == self.in_channels else f"grouped conv (groups={self.groups})"
        if self.stride != (1, 1):
            return f"stride {self.stride[0] if self.stride[0] == self.stride[1] else self.stride}"
        if self.dilation != (1, 1):
            return f"dilation {self.dilation}"
        if kh != kw or kh % 2 == 0:
            return f"kernel {kh}x{kw} is not square and odd"
        if self.padding != (kh // 2, kw // 2) or self.padding_mode != "zeros":
            return f"padding {self.padding} ({self.padding_mode}) is not zero 'same' padding"
        return ""

    def describe(self) -> str:
        """E.g. 'conv 64->64, 3x3, stride 1, padding 1, groups 4'."""

        def pair(p) -> str:
            return str(p[0]) if isinstance(p, tuple) and p[0] == p[1] else str(p)

        return (
            f"conv {self.in_channels}->{self.out_channels}, {self.kernel[0]}x{self.kernel[1]}, "
            f"stride {pair(self.stride)}, padding {pair(self.padding)}, groups {self.groups}"
        )


@dataclass(frozen=True)
class ConvMatch:
    """An operator recognised as a convolution at concrete sizes (batch excluded)."""

    spec: ConvSpec
    input_shape: tuple[int, int, int]  # C, H, W
    output_shape: tuple[int, int, int]  # K, Ho, Wo
    weight: str  # the torch module's parameter holding the weights
    weight_shape: tuple[int, ...]  # its shape in the operator's layout
    weight_order: tuple[str, str, str]  # the order of "c", "kh", "kw" after the output axis of that weight

    def torch_weight(self, w: np.ndarray) -> np.ndarray:
        """The operator's weight in torch's layout [K, C/G, kh, kw]."""
        spec = self.spec
        sizes = {"c": spec.in_channels // spec.groups, "kh": spec.kernel[0], "kw": spec.kernel[1]}
        shaped = np.asarray(w).reshape(spec.out_channels, *(sizes[axis] for axis in self.weight_order))
        return np.ascontiguousarray(shaped.transpose(0, *(1 + self.weight_order.index(a) for a in _ROLES)))


_ROLES = ("c", "kh", "kw")


def match_conv(graph: OperatorGraph, bindings: Mapping[str, int] | None = None) -> ConvMatch:
    """Read the operator as a 2-D convolution at these sizes, or NotAConvolution naming why not."""
    return _Matcher(make_plan(graph, bindings)).match()


class _Matcher:
    def __init__(self, plan: Plan):
        self.plan, self.graph = plan, plan.graph
        self.name = self.graph.name or "operator"
        self.kernel, self.stride = [1, 1], [1, 1]
        self.unfolded: list[int] = []  # spatial axes (0: H, 1: W) in the order they were unfolded
        self.contraction: Step | None = None

    def fail(self, reason: str) -> NotAConvolution:
        return NotAConvolution(f"{self.name} is not a 2-D convolution: {reason}")

    def match(self) -> ConvMatch:
        graph, plan = self.graph, self.plan
        if len(plan.input_shape) != 3 or graph.spatial != 2:
            raise self.fail(f"its input {graph.input_type()} is not [C, H, W] with two spatial axes")
        previous = INPUT
        for step in plan.steps:
            where = label(graph, step.node)
            if list(graph.inputs_of(step.node)) != [previous]:
                raise self.fail(
                    f"{where} does not read just the step before it; a convolution is one "
                    "chain from the input to the output"
                )
            self._step(step, where)
            previous = [step.node, *step.absorbed][-1]
        if self.contraction is None:
            raise self.fail("it has no fc or share contracting the channels")
        return self._result()

    def _step(self, step: Step, where: str) -> None:
        prim, x = step.prim, step.ins[0]
        if isinstance(prim, Unfold):
            axis = self._spatial_axis(x, prim.axis(x), where)
            if self.contraction is not None or axis in self.unfolded or self.stride[axis] != 1:
                raise self.fail(
                    f"{where} unfolds a window after the contraction, a second window, or a "
                    "strided axis (a dilated window)"
                )
            self.unfolded.append(axis)
            self.kernel[axis] = step.out_shape[x.spatial_dims[0]]  # the window axis, before the spatial ones
        elif isinstance(prim, Stride):
            d = prim.axis(x)
            self.stride[self._spatial_axis(x, d, where)] *= step.in_shapes[0][d] // step.out_shape[d]
        elif isinstance(prim, (FullyConnected, Share)) and self.contraction is None:
            self.contraction = step
        elif isinstance(prim, (FullyConnected, Share)):
            raise self.fail(f"{where} is a second contraction, after {label(self.graph, self.contraction.node)}")
        else:
            raise self.fail(f"{where} is not part of a convolution")

    def _spatial_axis(self, x: TensorType, d: int, where: str) -> int:
        if d not in x.spatial_dims:
            raise self.fail(f"{where} acts on channel axis {d} of {x}, not on H or W")
        return x.spatial_dims.index(d)

    def _result(self) -> ConvMatch:
        step = self.contraction
        c, h, w = self.plan.input_shape
        x = step.ins[0]
        channels = x.channel_dims  # [C, then the windows in unfold order]
        where = label(self.graph, step.node)
        if len(channels) != 1 + len(self.unfolded):
            raise self.fail(f"{where} contracts {x}, not the input channels and the windows")
        roles = ["c", *(_ROLES[1 + axis] for axis in self.unfolded)]  # what each channel axis holds
        if isinstance(step.prim, FullyConnected):
            out, block = step.weight.shape
            groups = prod(step.in_shapes[0][a] for a in channels) // block
            if c % groups:
                raise self.fail(
                    f"{where} has {groups} groups, which do not divide the {c} input channels "
                    "(its blocks cut through the kernel window)"
                )
            order = list(roles)  # the weight's columns flatten the channel axes in order
        else:
            out, groups = self._share_channels(step, channels, where), 1
            order = [roles[channels.index(a)] for a in step.prim.shared_axes(x)]
        order += [role for role in _ROLES if role not in order]  # an axis without a window: size 1
        spec = ConvSpec(
            c,
            out,
            (self.kernel[0], self.kernel[1]),
            (self.stride[0], self.stride[1]),
            (self.kernel[0] // 2, self.kernel[1] // 2),
            groups,
        )
        return ConvMatch(
            spec, (c, h, w), tuple(self.plan.output_shape), step.weight.name, step.weight.shape, tuple(order)
        )

    def _share_channels(self, step: Step, channels: list[int], where: str) -> int:
        """A share is a standard conv when it shares every channel axis, adds the output
        channels, and its reduces remove exactly the shared axes; -> the output channels."""
        x, prim = step.ins[0], step.prim
        out = step.weight.shape[0] if prim.size("out") is not None else None
        axes = ["out", *range(len(x))]  # the share's output axes, named by the input axis they hold
        removed = [axes.pop(d) for d in step.reduced]
        if out is None or sorted(prim.shared_axes(x)) != channels or set(removed) != set(channels):
            raise self.fail(
                f"{where} with its reduces is not a contraction of all channel axes into new output channels"
            )
        return out
