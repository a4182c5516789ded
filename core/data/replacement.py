"""What replacing a backbone's convolutions by an operator did to each (core.data.replace
makes it), in a module without torch, so that job results can carry it."""

from __future__ import annotations

from dataclasses import dataclass

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

    @property
    def shape(self) -> ConvShape:
        return ConvShape(self.c_in, self.c_out, self.height, self.width, self.kernel)

    def line(self) -> str:
        shape = f"{self.c_in}->{self.c_out} @{self.height}x{self.width} k{self.kernel}"
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
    """A standard convolution's sizes: [c_in, height, width] -> [c_out, height, width], a
    kernel x kernel window. What the operator is bound to where it stands in for the layer."""

    c_in: int
    c_out: int
    height: int
    width: int
    kernel: int


def layer_bindings(graph: OperatorGraph, layer: ConvShape) -> dict[str, int]:
    """The operator's defaults, overridden by the sizes of one [C_in, H, W] -> [C_out, H, W] layer."""
    bindings = dict(graph.bindings)
    if len(graph.input_shape) != 3 or len(graph.output_shape) != 3 or graph.spatial != 2:
        raise LayerMismatch(f"operator maps {graph.input_shape} -> {graph.output_shape}, not [C, H, W] -> [C, H, W]")
    for expr, value in zip(graph.input_shape, (layer.c_in, layer.height, layer.width)):
        if expr.isidentifier():
            bindings[expr] = value
    if graph.output_shape[0].isidentifier() and graph.output_shape[0] not in graph.input_shape:
        bindings[graph.output_shape[0]] = layer.c_out
    if "K" in graph.mentioned_variables():
        bindings["K"] = layer.kernel
    return bindings
