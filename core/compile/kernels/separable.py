"""A depthwise-separable convolution (a depthwise KxK, then a pointwise 1x1; core.codegen.conv_spec
match_separable) as one fused kernel with a hand-written schedule.

TVM's default lowering runs the two as separate loop nests: the depthwise output goes through
memory whole before the pointwise product reads it back. Here it is made a row at a time:

    pad        x zero-padded                                      [N, C, H', W']
    depthwise  each output row, all channels, just before it is read   [N, C, Ho, Wo]
    pointwise  y[n, k, row] = sum_c w[k, c] * depthwise[n, c, row]   a GEMM per row

so a row of the depthwise output (C x Wo floats) is still in cache when the GEMM reads it. The
GEMM keeps a register block of `channels` output channels x `vectors` SIMD vectors of output
columns (along the row, computed to whole blocks and cropped, so no bounds check slows the loop) and runs over the input channels; its weight is packed ahead of time
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
from .grid import fingerprint, time_module, tune_grid
from .protocol import Progress, Tuned, Variant, host_arguments

GRID_FILE = "separable_grid.json"


@dataclass(frozen=True)
class Blocks:
    channels: int  # output channels per register block: divides K
    vectors: int  # SIMD vectors of output columns per register block (rows computed to whole blocks)

    def key(self) -> str:
        return f"channels={self.channels},vectors={self.vectors}"


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
        """Register blocks of at most 24 vector registers: output channels dividing K up to 16,
        one to four vectors of a row (no more than the row fills). The default first (4 channels x
        1 vector: on 64 channels at 56x56 with AVX-512, one thread, load 5, it ran 0.74 ms, the
        fastest of 4 or 8 channels by 1, 2 or 4 vectors, 0.74-0.90 ms), then the rest, nearest first."""
        k, _, wo = self.pointwise.output_shape
        most = min(4, -(-wo // self.lanes))
        points = [Blocks(c, v) for c in _divisors(k, 16) for v in range(1, most + 1) if c * v <= 24]
        default = Blocks(max(_divisors(k, 4)), 1)
        return sorted(
            points,
            key=lambda b: (b != default, abs(log2(b.channels / default.channels)) + b.vectors - 1, -b.channels),
        )

    def untuned(self) -> Variant:
        return self._variant(self.blocks, "untuned")

    def tune(self, progress: Progress, check_cancelled: Callable[[], None]) -> Tuned:
        """Time up to `tune_trials` grid points (earlier ones in the records count), keep the fastest."""
        work_dir = self.settings.tuning_folder()
        grid = self.grid()[: self.settings.tune_trials]
        self.blocks, trials, new = tune_grid(
            "separable", grid, self._key, self._time, work_dir / GRID_FILE, progress, check_cancelled
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
        n, k, row, col, c = sch.get_loops(gemm)
        k_outer, k_inner = sch.split(k, [None, blocks.channels])
        col_outer, vectors, lanes = sch.split(col, [None, blocks.vectors, self.lanes])
        sch.reorder(n, row, k_outer, col_outer, c, k_inner, vectors, lanes)
        crop = sch.get_sblock("crop")  # copies the register block out; makes the GEMM's buffer that block only
        sch.reverse_compute_at(crop, col_outer)
        depthwise = sch.get_sblock("depthwise")
        sch.compute_at(depthwise, row, preserve_unit_loops=True)  # the row, all channels, just before the GEMM
        dc, dcol, dry, drx = sch.get_loops(depthwise)[-4:]
        sch.reorder(dc, dry, drx, dcol)
        sch.vectorize(dcol)
        pad = sch.get_sblock("pad")
        *outer, pad_col = sch.get_loops(pad)
        sch.parallel(sch.fuse(*outer))
        sch.vectorize(pad_col)
        sch.parallel(sch.fuse(n, row))
        sch.unroll(k_inner)
        sch.unroll(vectors)
        sch.vectorize(lanes)  # a vector at a time: a loop vectorised wider ran 3-5x slower
        sch.vectorize(sch.split(sch.get_loops(crop)[-1], [None, self.lanes])[1])
        sch.decompose_reduction(gemm, c)
        sch.decompose_reduction(depthwise, dry)
        return sch.mod

    def _compute(self, blocks: Blocks) -> tuple[te.Tensor, ...]:
        d = self.depthwise.spec
        (c, h, w), (k, ho, wo) = self.depthwise.input_shape, self.pointwise.output_shape
        (kh, kw), (sh, sw) = d.kernel, d.stride
        assert isinstance(d.padding, tuple)  # the matcher reads an operator's padding in numbers
        top, left = d.padding
        block = blocks.vectors * self.lanes
        width = -(-wo // block) * block  # whole register blocks: no bounds check in the GEMM's loop
        rows, cols = (ho - 1) * sh + kh, (width - 1) * sw + kw
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
            (batch, c, ho, width),
            lambda n, ci, oh, ow: te.sum(
                pad[n, ci, oh * sh + ry, ow * sw + rx] * w_depthwise[ci, ry, rx], axis=[ry, rx]
            ),
            name="depthwise",
        )
        rc = te.reduce_axis((0, c), "rc")
        gemm = te.compute(
            (batch, k, ho, width),
            lambda n, o, oh, ow: te.sum(
                w_pointwise[o // blocks.channels, rc, o % blocks.channels] * depthwise[n, rc, oh, ow], axis=rc
            ),
            name="pointwise",
        )
        y = te.compute((batch, k, ho, wo), lambda n, o, oh, ow: gemm[n, o, oh, ow], name="crop")
        return x, w_depthwise, w_pointwise, y

    def _variant(self, blocks: Blocks, source: str) -> Variant:
        w = self.workload
        weights = self.weights(w.weight(self.depthwise.weight), w.weight(self.pointwise.weight), blocks)
        args = host_arguments(w, weights, (w.batch, *self.pointwise.output_shape))
        details = {
            "convolution": f"{self.depthwise.spec.describe()}, then {self.pointwise.spec.describe()}",
            "blocks": {"channels": blocks.channels, "vectors": blocks.vectors, "lanes": self.lanes},
        }
        layout = f"NCHW (pointwise weights [K/{blocks.channels}, C, {blocks.channels}])"
        return Variant(self.module(blocks), args, self.settings.algorithm, source, layout, details)

    def _key(self, blocks: Blocks) -> str:
        return f"{blocks.key()} {fingerprint(self.module(blocks))}"

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
