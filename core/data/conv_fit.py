"""Whether and how an operator fits a convolution, without torch: a conv's sizes (ConvShape),
why an operator does not stand in for it (replaceable), the sizes the operator is bound to
there (layer_bindings), and what swapping did to each conv (LayerOutcome, Replacement, which
core.data.swap_convs makes and job results carry)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..codegen.conv_spec import ConvSpec
from ..ir.graph import OperatorGraph
from .errors import LayerMismatch


@dataclass(frozen=True)
class LayerOutcome:
    """One nn.Conv2d of the backbone: its shape, whether it was replaced, and how or why not."""

    name: str
    c_in: int
    c_out: int
    height: int
    width: int
    kernel: int
    replaced: bool
    detail: str  # how it was composed when replaced, why not otherwise
    stride: int = 1

    @property
    def shape(self) -> ConvShape:
        return ConvShape(self.c_in, self.c_out, self.height, self.width, self.kernel, self.stride)

    def line(self) -> str:
        stride = f" s{self.stride}" if self.stride > 1 else ""
        size = f"{self.height}x{self.width}" if self.height else "-"  # - : never called
        shape = f"{self.c_in}->{self.c_out} @{size} k{self.kernel}{stride}"
        return f"{'replaced' if self.replaced else 'kept':8} {self.name:28} {shape:24} {self.detail}"


@dataclass(frozen=True)
class Replacement:
    """What a job's result keeps of a replacement: the operator, how many convolutions it
    replaced, and every convolution's outcome."""

    operator: str
    replaced: int
    layers: tuple[LayerOutcome, ...]


@dataclass(frozen=True)
class ConvShape:
    """A convolution's sizes: [c_in, height, width] -> [c_out, height / stride, width / stride]
    (rounded up), a kernel x kernel window. The operator stands in for it at
    [c_in, operator_size] -> [c_out, operator_size]: on every stride-th row and column of the
    input (a strided convolution computes only those outputs, so the operator's FLOPs stay
    those of the same operator at the smaller size, not four times them)."""

    c_in: int
    c_out: int
    height: int
    width: int
    kernel: int
    stride: int = 1

    @property
    def operator_size(self) -> tuple[int, int]:
        return -(-self.height // self.stride), -(-self.width // self.stride)


def replaceable(spec: ConvSpec, kinds: tuple[str, ...]) -> str:
    """Why an operator does not stand in for this convolution when it replaces `kinds` (some of
    core.data.specs.REPLACE_KINDS), or "" when it does. A strided one must pad by K//2 as a
    standard one does, so that its output has the size of every stride-th input row."""
    (sh, sw), k = spec.stride, spec.kernel[0]
    why = replace(spec, stride=(1, 1)).why_not_standard()
    if why:
        return why
    if sh != sw:
        return f"stride {spec.stride} differs between rows and columns"
    needed = [kind for kind, needs in (("strided", sh > 1), ("pointwise", k == 1), ("standard", k > 1)) if needs]
    missing = [kind for kind in needed if kind not in kinds]
    if missing:
        what = f"{k}x{k}" + (f", stride {sh}" if sh > 1 else "")
        return f"{what}: {' and '.join(missing)} convolutions are not replaced here (replaced: {', '.join(kinds)})"
    return ""


def layer_bindings(graph: OperatorGraph, layer: ConvShape) -> dict[str, int]:
    """The operator's defaults, overridden by the sizes it has standing in for one layer:
    [C_in, H, W] -> [C_out, H, W] at the layer's operator_size, its window K the layer's."""
    bindings = dict(graph.bindings)
    if len(graph.input_shape) != 3 or len(graph.output_shape) != 3 or graph.spatial != 2:
        raise LayerMismatch(f"operator maps {graph.input_shape} -> {graph.output_shape}, not [C, H, W] -> [C, H, W]")
    for expr, value in zip(graph.input_shape, (layer.c_in, *layer.operator_size)):
        if expr.isidentifier():
            bindings[expr] = value
    if graph.output_shape[0].isidentifier() and graph.output_shape[0] not in graph.input_shape:
        bindings[graph.output_shape[0]] = layer.c_out
    if "K" in graph.mentioned_variables():
        bindings["K"] = layer.kernel
    return bindings
