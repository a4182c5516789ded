"""What the convolution algorithms tuned by MetaSchedule share (nchwc, im2col, winograd).

Each reads the operator as a convolution (its check in core.compile.algorithms), transforms
the torch module's weight once, ahead of time, into the layout its kernel reads (`weight`),
and writes a TE compute main(x [N, C, H, W], transformed weight, y [N, K, Ho, Wo]) (`compute`)
that MetaSchedule schedules as it does TVM's default lowering: MetaSchedule changes loops,
not buffer layouts, so the layout is the algorithm's choice and the loops are the search's.
The untuned kernel is that compute unscheduled, or scheduled by hand where the algorithm has
a schedule of its own (`scheduled`). Imports TVM: worker processes only."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
import tvm
from tvm import te, tirx

from ...codegen.conv_spec import ConvMatch
from ...codegen.gspc_schedule import simd_lanes
from ..algorithms import algorithm
from ..errors import CompileError
from ..place import Place
from ..settings import Settings
from ..workload import Workload
from .metaschedule import tuned_with_metaschedule
from .protocol import Progress, Tuned, Variant, host_arguments


class ConvKernel(ABC):
    """A convolution algorithm's kernel; subclasses give `weight`, `compute` and perhaps `layout`, `details`."""

    layout = "NCHW"

    def __init__(self, workload: Workload, place: Place, settings: Settings):
        conv = algorithm(settings.algorithm).check(workload.graph, workload.bindings)
        if not isinstance(conv, ConvMatch):
            raise CompileError(f"algorithm {settings.algorithm!r} does not read the operator as a convolution")
        if isinstance(conv.spec.padding, str):  # an operator's convolution has its padding in numbers
            raise CompileError(f"{workload.name}: padding {conv.spec.padding!r} is not in numbers")
        self.top, self.left = conv.spec.padding
        self.conv, self.workload, self.place, self.settings = conv, workload, place, settings
        self.lanes = simd_lanes(place.target) if place.target.kind.name == "llvm" else 4
        groups = conv.spec.groups
        self.k_pg, self.c_pg = conv.spec.out_channels // groups, conv.spec.in_channels // groups

    def details(self) -> dict[str, Any]:
        """What the algorithm chose, for the result (block sizes, tile size)."""
        return {}

    @abstractmethod
    def weight(self, torch_weight: np.ndarray) -> np.ndarray:
        """The weight [K, C/G, kh, kw] in the layout `compute` reads."""

    @abstractmethod
    def compute(self, x: te.Tensor) -> tuple[te.Tensor, te.Tensor]:
        """(the transformed weight's placeholder, the output [N, K, Ho, Wo]) computed from x."""

    def module(self) -> tvm.IRModule:
        x = te.placeholder((self.workload.batch, *self.conv.input_shape), "float32", name="x")
        weight, y = self.compute(x)
        return tvm.IRModule({"main": te.create_prim_func([x, weight, y]).with_attr("global_symbol", "main")})

    def scheduled(self, module: tvm.IRModule) -> tvm.IRModule:
        """The untuned kernel: the compute unscheduled, unless the algorithm has a schedule of its own."""
        return module

    def untuned(self) -> Variant:
        return self._variant(self.scheduled(self.module()), "untuned")

    def tune(self, progress: Progress, check_cancelled: Callable[[], None]) -> Tuned:
        """MetaSchedule on the unscheduled compute; the untuned kernel is offered beside what it finds."""
        return tuned_with_metaschedule(
            self.module(),
            self.place,
            self.settings,
            progress,
            check_cancelled,
            lambda module, source: self._variant(self.scheduled(module) if source == "untuned" else module, source),
        )

    def padded(self, x: te.Tensor, n, c, row, col, *inside) -> tirx.PrimExpr:
        """x[n, c] read at (row, col) of its zero-padded image (padding before: the spec's);
        zero also where any of `inside` is false."""
        top, left, (_, h, w) = self.top, self.left, self.conv.input_shape
        within = tirx.all(row >= top, row < h + top, col >= left, col < w + left, *inside)
        return tirx.if_then_else(within, x[n, c, row - top, col - left], tirx.const(0.0, "float32"))

    def _variant(self, module: tvm.IRModule, source: str) -> Variant:
        w, conv = self.workload, self.conv
        weight = self.weight(conv.torch_weight(w.weight(conv.weight))).astype(np.float32)
        args = host_arguments(w, [weight], (w.batch, *conv.output_shape))
        details = {"convolution": conv.spec.describe(), **self.details()}
        return Variant(module, args, self.settings.algorithm, source, self.layout, details)
