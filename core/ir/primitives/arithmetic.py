"""Arithmetic primitives: element-wise maps, reductions, softmax and the two
weighted primitives (Canvas's fc and Syno's share)."""

from __future__ import annotations

from ..errors import ShapeError
from ..symbolic import Size
from ..tensor import Dim, TensorType
from .base import Param, Primitive, require_divisible

_DIM = Param("dim", "dim", 0, "Axis the primitive acts on (negative counts from the end).")

UNARY_OPS = ("relu", "gelu", "sigmoid", "tanh", "abs", "exp", "neg", "sin", "sqrt", "sqr")


class ElementWise(Primitive):
    op = "elementwise"
    title = "Element-wise"
    families = ("canvas",)
    category = "arithmetic"
    doc = "Apply a scalar function to every element (relu, gelu, sigmoid, ...); shape unchanged."
    spec = (Param("fn", "choice", "relu", "The function.", choices=UNARY_OPS),)

    def infer(self, inputs, kinds):
        return inputs[0]


class Fold(Primitive):
    op = "fold"
    title = "Fold"
    families = ("canvas",)
    category = "arithmetic"
    doc = "Average or max over an axis, removing it: [..X..] -> [....]."
    spec = (_DIM, Param("fn", "choice", "avg", "Reduction.", choices=("avg", "max")))

    def infer(self, inputs, kinds):
        (x,) = inputs
        d = self.axis(x)
        return TensorType([*x[:d], *x[d + 1 :]])

    def flops(self, inputs, out):
        return inputs[0].numel()


class Reduce(Primitive):
    op = "reduce"
    title = "Reduce"
    families = ("syno",)
    category = "arithmetic"
    doc = "Sum over an axis, removing it (Syno REDUCE). After a share it completes a contraction."
    spec = (_DIM,)

    infer = Fold.infer
    flops = Fold.flops


class Softmax(Primitive):
    op = "softmax"
    title = "Softmax"
    families = ("canvas",)
    category = "arithmetic"
    doc = "Softmax along an axis; shape unchanged."
    spec = (_DIM,)

    def infer(self, inputs, kinds):
        (x,) = inputs
        self.axis(x)
        return x

    def flops(self, inputs, out):
        return out.numel() * 4  # max, exp, sum, divide per element


class FullyConnected(Primitive):
    op = "fc"
    title = "Fully connected"
    families = ("canvas",)
    category = "arithmetic"
    doc = (
        "All channel axes -> one new channel axis of size `out` (often a dynamic variable x1): "
        "a 1x1 convolution over the flattened channels, optionally grouped."
    )
    spec = (
        Param("out", "size", "x1", "Output channels (a size expression; x<k> are dynamic)."),
        Param("groups", "size", "1", "Blocks of the flattened channels mixed separately."),
    )

    def _channels(self, x: TensorType) -> Size:
        total = Size(1)
        for i in x.channel_dims:
            total = total * x[i].size
        return total

    def infer(self, inputs, kinds):
        (x,) = inputs
        out, groups = self.required_size("out"), self.required_size("groups")
        require_divisible(self._channels(x), groups, kinds, "fc input channels")
        require_divisible(out, groups, kinds, "fc output channels")
        spatial = [x[i] for i in x.spatial_dims]
        return TensorType([Dim(out, False), *spatial])

    def weight_shape(self, inputs, out):
        return (self.required_size("out"), self._channels(inputs[0]) / self.required_size("groups"))

    def integral(self, inputs, out):
        return [
            *super().integral(inputs, out),
            ("output channels per group", self.required_size("out") / self.required_size("groups")),
        ]

    def macs(self, inputs, out):
        w = self.weight_shape(inputs, out)
        return w[0] * w[1] * _spatial_numel(out)

    def flops(self, inputs, out):
        return self.macs(inputs, out) * 2


class Share(Primitive):
    op = "share"
    title = "Share"
    families = ("syno",)
    category = "contraction"
    doc = (
        "Multiply element-wise with a weight indexed by the shared axes (Syno SHARE); "
        "`out` adds a new leading weight axis (e.g. C_out). Following reduces make it a contraction."
    )
    spec = (
        Param("dims", "dims", [0], "Axes shared with the weight."),
        Param("out", "size", "C_out", "Size of a new weight-only axis placed first, or empty for none.", optional=True),
    )

    def infer(self, inputs, kinds):
        (x,) = inputs
        for d in self.params["dims"]:
            if not -len(x) <= d < len(x):
                raise ShapeError(f"shared axis {d} is out of range for {x}")
            if x[d % len(x)].spatial:
                raise ShapeError(
                    f"share over spatial axis {d} ({x[d].size}) would tie weights to positions", dim=d % len(x)
                )
        out = self.size("out")
        return TensorType([Dim(out, False), *x]) if out is not None else x

    def shared_axes(self, x: TensorType) -> list[int]:
        return [d % len(x) for d in self.params["dims"]]

    def weight_shape(self, inputs, out):
        x = inputs[0]
        lead = [self.size("out")] if self.size("out") is not None else []
        return tuple(lead + [x[d].size for d in self.shared_axes(x)])

    def macs(self, inputs, out):
        return out.numel()

    def flops(self, inputs, out):
        return out.numel()  # the multiplies; core.analysis.cost adds the accumulation of a contraction


def _spatial_numel(t: TensorType) -> Size:
    total = Size(1)
    for i in t.spatial_dims:
        total = total * t[i].size
    return total
