"""A depthwise-separable convolution (a depthwise KxK, then a pointwise 1x1; core.codegen.conv_spec
match_separable) as one fused kernel with a hand-written schedule.

TVM's default lowering runs the two as separate loop nests: the depthwise output goes through
memory whole before the pointwise product reads it back. Here it is made a row at a time:

    pad        x zero-padded                                      [N, C, H', W']
    depthwise  each output row, all channels, just before it is read   [N, C, Ho, Wo]
    pointwise  y[n, k, row] = sum_c w[k, c] * depthwise[n, c, row]   a GEMM per row

so a row of the depthwise output (C x Wo floats) is still in cache when the GEMM reads it. The
GEMM keeps a register block of `channels` output channels x `columns` output columns
(vectorised along the row) and runs over the input channels; its weight is packed ahead of time
to [K / channels, C, channels], so a block's weights are read in order. Rows of all images are
shared between the threads. Tuning times a grid of the two block sizes (kernels.grid).
Imports TVM: worker processes only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import log2

import numpy as np
import tvm
from tvm import te, tirx

from ...codegen.gspc_schedule import simd_lanes
from ..algorithms import separable_convolution
from ..errors import CompileError
from ..place import Place
from ..settings import Settings
from ..tune import Tuning
from ..workload import Workload
from .grid import time_module, tune_grid
from .protocol import Progress, Tuned, Variant, host_arguments

GRID_FILE = "separable_grid.json"
_ACCUMULATORS = 16  # vector registers the default register block may fill (AVX-512 has 32)


@dataclass(frozen=True)
class Blocks:
    channels: int  # output channels per register block: divides K
    columns: int  # output columns per register block: divides Wo

    def key(self) -> str:
        return f"channels={self.channels},columns={self.columns}"


def _divisors(n: int, at_most: int) -> list[int]:
    return [d for d in range(1, min(n, at_most) + 1) if n % d == 0]


class SeparableKernel:
    """One operator's fused kernel: the blocks in use (the defaults, or the grid's best after `tune`)."""

    def __init__(self, workload: Workload, place: Place, settings: Settings):
        match = separable_convolution(workload.graph, workload.bindings)
        if place.target.kind.name != "llvm":
            raise CompileError(
                "algorithm 'separable' has a CPU schedule (LLVM targets); "
                f"this device's target is {place.target.kind.name!r}"
            )
        self.depthwise, self.pointwise = match.depthwise, match.pointwise
        self.workload, self.place, self.settings = workload, place, settings
        self.lanes = simd_lanes(place.target)
        grid = self.grid()
        self.blocks = grid[0]

    def grid(self) -> list[Blocks]:
        """Register blocks of at most 24 vector registers: channels dividing K up to 16, columns
        dividing Wo up to four vectors. The default first (the most multiply-adds per weight
        broadcast and per loaded input within _ACCUMULATORS registers), then the rest, nearest first."""
        k, _, wo = self.pointwise.output_shape
        lanes = self.lanes

        def registers(b: Blocks) -> int:
            return b.channels * -(-b.columns // lanes)

        points = [
            Blocks(c, w) for c in _divisors(k, 16) for w in _divisors(wo, 4 * lanes) if registers(Blocks(c, w)) <= 24
        ]
        fitting = [b for b in points if registers(b) <= _ACCUMULATORS]
        default = max(fitting, key=lambda b: (b.channels * b.columns, b.columns))
        return sorted(
            points,
            key=lambda b: (
                b != default,
                abs(log2(b.channels / default.channels)) + abs(log2(b.columns / default.columns)),
                -b.columns,
            ),
        )

    def untuned(self) -> Variant:
        return self._variant(self.blocks, "untuned")

    def tune(self, progress: Progress, check_cancelled: Callable[[], None]) -> Tuned:
        """Time up to `tune_trials` grid points (earlier ones in the records count), keep the fastest."""
        work_dir = self.settings.tuning_folder()
        grid = self.grid()[: self.settings.tune_trials]
        self.blocks, trials, new = tune_grid(
            "separable", grid, Blocks.key, self._time, work_dir / GRID_FILE, progress, check_cancelled
        )
        best = self._variant(self.blocks, "tuned")
        return Tuned(Tuning(work_dir, best.module, trials, new), (best,))

    def weights(self, depthwise: np.ndarray, pointwise: np.ndarray, blocks: Blocks) -> list[np.ndarray]:
        """The operator's two weights as the kernel takes them: [C, kh, kw] and [K / channels, C, channels]."""
        d = self.depthwise.torch_weight(depthwise)
        p = self.pointwise.torch_weight(pointwise)
        k, c = p.shape[:2]
        packed = p.reshape(k // blocks.channels, blocks.channels, c).transpose(0, 2, 1)
        return [d.reshape(c, *d.shape[2:]).astype(np.float32), np.ascontiguousarray(packed, dtype=np.float32)]

    def module(self, blocks: Blocks) -> tvm.IRModule:
        """The scheduled kernel: main(x [N, C, H, W], depthwise [C, kh, kw], packed pointwise, y [N, K, Ho, Wo])."""
        func = te.create_prim_func(list(self._compute(blocks))).with_attr("global_symbol", "main")
        sch = tvm.s_tir.Schedule(tvm.IRModule({"main": func}))
        gemm = sch.get_sblock("pointwise")
        accumulators = sch.cache_write(gemm, 0, "global")  # the register block, written out once
        n, k, row, col, c = sch.get_loops(gemm)
        k_outer, k_inner = sch.split(k, [None, blocks.channels])
        col_outer, col_inner = sch.split(col, [None, blocks.columns])
        sch.reorder(n, row, k_outer, col_outer, c, k_inner, col_inner)
        sch.reverse_compute_at(accumulators, col_outer)
        depthwise = sch.get_sblock("depthwise")
        sch.compute_at(depthwise, row)  # the row's depthwise output, all channels, just before the GEMM
        dc, dcol, dry, drx = sch.get_loops(depthwise)[-4:]
        sch.reorder(dc, dry, drx, dcol)
        sch.vectorize(dcol)
        pad = sch.get_sblock("pad")
        *outer, pad_col = sch.get_loops(pad)
        sch.parallel(sch.fuse(*outer))
        sch.vectorize(pad_col)
        sch.parallel(sch.fuse(n, row))
        sch.unroll(k_inner)
        sch.vectorize(col_inner)
        sch.vectorize(sch.get_loops(accumulators)[-1])
        sch.decompose_reduction(gemm, c)
        sch.decompose_reduction(depthwise, dry)
        return sch.mod

    def _compute(self, blocks: Blocks) -> tuple[te.Tensor, ...]:
        d = self.depthwise.spec
        (c, h, w), (k, ho, wo) = self.depthwise.input_shape, self.pointwise.output_shape
        (kh, kw), (sh, sw) = d.kernel, d.stride
        assert isinstance(d.padding, tuple)  # the matcher reads an operator's padding in numbers
        top, left = d.padding
        rows, cols = (ho - 1) * sh + kh, (wo - 1) * sw + kw
        batch = self.workload.batch
        x = te.placeholder((batch, c, h, w), "float32", name="x")
        w_depthwise = te.placeholder((c, kh, kw), "float32", name="w_depthwise")
        w_pointwise = te.placeholder((k // blocks.channels, c, blocks.channels), "float32", name="w_pointwise")
        pad = te.compute(
            (batch, c, rows, cols),
            lambda n, ci, r, q: tirx.if_then_else(
                tirx.all(r >= top, r < h + top, q >= left, q < w + left),
                x[n, ci, r - top, q - left],
                tirx.const(0.0, "float32"),
            ),
            name="pad",
        )
        ry, rx = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx")
        depthwise = te.compute(
            (batch, c, ho, wo),
            lambda n, ci, oh, ow: te.sum(
                pad[n, ci, oh * sh + ry, ow * sw + rx] * w_depthwise[ci, ry, rx], axis=[ry, rx]
            ),
            name="depthwise",
        )
        rc = te.reduce_axis((0, c), "rc")
        y = te.compute(
            (batch, k, ho, wo),
            lambda n, o, oh, ow: te.sum(
                w_pointwise[o // blocks.channels, rc, o % blocks.channels] * depthwise[n, rc, oh, ow], axis=rc
            ),
            name="pointwise",
        )
        return x, w_depthwise, w_pointwise, y

    def _variant(self, blocks: Blocks, source: str) -> Variant:
        w = self.workload
        weights = self.weights(w.weight(self.depthwise.weight), w.weight(self.pointwise.weight), blocks)
        args = host_arguments(w, weights, (w.batch, *self.pointwise.output_shape))
        details = {
            "convolution": f"{self.depthwise.spec.describe()}, then {self.pointwise.spec.describe()}",
            "blocks": {"channels": blocks.channels, "columns": blocks.columns},
        }
        layout = f"NCHW (pointwise weights [K/{blocks.channels}, C, {blocks.channels}])"
        return Variant(self.module(blocks), args, self.settings.algorithm, source, layout, details)

    def _time(self, blocks: Blocks) -> float | None:
        """ms of one run on random data, None if it does not build."""
        rng = np.random.default_rng(0)
        batch = self.workload.batch
        x, d, p = (
            rng.standard_normal(s, dtype=np.float32)
            for s in [(batch, *self.depthwise.input_shape), self.depthwise.weight_shape, self.pointwise.weight_shape]
        )
        inputs = [x, *self.weights(d, p, blocks)]
        return time_module(self.module(blocks), self.place, inputs, (batch, *self.pointwise.output_shape))
