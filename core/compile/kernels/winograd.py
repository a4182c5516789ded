"""Winograd's minimal filtering F(m x m, 3x3) as a kernel (kernels.conv), for 3x3 convolutions
at stride 1: each m x m output tile costs (m + 2)^2 multiplications per channel pair instead of
9 m^2 (2.25x fewer for m = 2, 4x for m = 4), paid for with transforms of the input and output.

    U = G g G^T          the weight, per (output, input) channel: [a, a, K, C_PG]  (ahead of time)
    V = B^T d B          each a x a input tile d (a = m + 2; the image zero-padded): [a, a, C, P]
    M = U . V            a x a matrix products over the input channels of a group: [a, a, K, P]
    Y = A^T M A          the m x m output tiles [K, m, m, P], cut to [N, K, Ho, Wo]

with P the tiles of all images, rounded up to whole SIMD vectors and innermost in every buffer,
so the hand schedule (`scheduled`, the untuned kernel; MetaSchedule tunes the same compute)
vectorises every stage along the tiles. The matrices come from Toom-Cook interpolation at the points
0, 1, -1 (m = 2) and 2, -2 (m = 4) and infinity (`transforms`). F(4x4) is used unless the
output is smaller than 8 x 8, where F(2x2) wastes less on partial tiles."""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
from tvm import te, tirx
from tvm.topi.utils import const_matrix

from .conv import ConvKernel

_POINTS = {2: (0, 1, -1), 4: (0, 1, -1, 2, -2)}  # finite interpolation points; infinity is the last


def transforms(m: int, r: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A [a, m], B [a, a], G [a, r]) such that 1-D correlation y_i = sum_k g_k d_(i+k) is
    A^T ((G g) * (B^T d)). Correlation is the transpose of polynomial multiplication, which
    Toom-Cook computes as interpolate(evaluate(u) * evaluate(g)); so A and G evaluate a
    polynomial of m and of r coefficients at the points, and B interpolates (inverse evaluation)."""
    points = _POINTS[m]

    def evaluate(coefficients: int) -> np.ndarray:
        rows = [[float(p) ** i for i in range(coefficients)] for p in points]
        return np.array([*rows, [0.0] * (coefficients - 1) + [1.0]])  # infinity: the leading coefficient

    alpha = m + r - 1
    return evaluate(m), np.linalg.inv(evaluate(alpha)), evaluate(r)


def _nonzero(matrix: np.ndarray, i, j) -> tirx.PrimExpr:
    """Whether matrix[i, j] is not zero, as a condition on the indices: once the transforms'
    loops are unrolled it folds to a constant and the term is left out (LLVM keeps x * 0.0)."""
    return tirx.any(*(tirx.all(i == int(r), j == int(c)) for r, c in zip(*np.nonzero(matrix))))


def _two_sided(name: str, shape, values: np.ndarray, matrix_name: str, axes, read, pick) -> te.Tensor:
    """M^T X M for every tile X (M: `values`, a constant tensor named `matrix_name`), summing
    over M's nonzero entries only: `read(r1, r2, *index)` is X's element (r1, r2) for the output
    element at `index`, and `pick(*index)` the output's row and column of M^T X M."""
    matrix = const_matrix(values.astype(np.float32), matrix_name)
    r1, r2 = (te.reduce_axis((0, values.shape[0]), axis) for axis in axes)

    def element(*index):
        i, j = pick(*index)
        term = read(r1, r2, *index) * matrix[r1, i] * matrix[r2, j]
        kept = tirx.all(_nonzero(values, r1, i), _nonzero(values, r2, j))
        return te.sum(tirx.if_then_else(kept, term, tirx.const(0.0, "float32")), axis=[r1, r2])

    return te.compute(shape, element, name=name)


class WinogradKernel(ConvKernel):
    def __init__(self, *args):
        super().__init__(*args)
        _, ho, wo = self.conv.output_shape
        self.m = 4 if min(ho, wo) >= 8 else 2
        self.alpha = self.m + 2
        self.a, self.b, self.g = transforms(self.m)
        self.tiles_w = -(-wo // self.m)
        self.per_image = -(-ho // self.m) * self.tiles_w
        self.p = -(-self.workload.batch * self.per_image // self.lanes) * self.lanes  # whole vectors of tiles
        # output channels in the GEMM's registers: 8 ran fastest of 4, 8 and 16 (64 channels, 56x56)
        self.gemm_block = max(d for d in range(1, 9) if self.k_pg % d == 0)
        self.layout = f"NCHW (Winograd F({self.m}x{self.m},3x3) tiles)"

    def details(self) -> dict[str, Any]:
        return {"tile": f"F({self.m}x{self.m},3x3)"}

    def weight(self, torch_weight: np.ndarray) -> np.ndarray:
        return np.einsum("ek,ockl,ul->euoc", self.g, torch_weight.astype(np.float64), self.g)

    def compute(self, x: te.Tensor) -> tuple[te.Tensor, te.Tensor]:
        conv, m, alpha = self.conv, self.m, self.alpha
        batch, (k, ho, wo), c = self.workload.batch, conv.output_shape, conv.input_shape[0]
        tiles_w, per_image = self.tiles_w, self.per_image
        tiles = te.compute(
            (c, alpha, alpha, self.p),
            lambda ci, i, j, p: self.padded(
                x, p // per_image, ci, (p % per_image) // tiles_w * m + i, p % tiles_w * m + j, p < batch * per_image
            ),
            name="input_tiles",
        )
        v = _two_sided(
            "input_transform",
            (alpha, alpha, c, self.p),
            self.b,
            "B",
            ("ri", "rj"),
            lambda ri, rj, e, u, ci, p: tiles[ci, ri, rj, p],
            lambda e, u, ci, p: (e, u),
        )
        weight = te.placeholder((alpha, alpha, k, self.c_pg), "float32", name="w_winograd")
        rc = te.reduce_axis((0, self.c_pg), "rc")
        product = te.compute(
            (alpha, alpha, k, self.p),
            lambda e, u, o, p: te.sum(weight[e, u, o, rc] * v[e, u, o // self.k_pg * self.c_pg + rc, p], axis=rc),
            name="batched_gemm",
        )
        out_tiles = _two_sided(
            "output_transform",
            (k, m, m, self.p),
            self.a,
            "A",
            ("re", "ru"),
            lambda re, ru, o, i, j, p: product[re, ru, o, p],
            lambda o, i, j, p: (i, j),
        )
        y = te.compute(
            (batch, k, ho, wo),
            lambda n, o, h, w: out_tiles[o, h % m, w % m, n * per_image + h // m * tiles_w + w // m],
            name="untile",
        )
        return weight, y

    def scheduled(self, module: tvm.IRModule) -> tvm.IRModule:
        """Every stage vectorised along the tiles (P, innermost in every buffer): a vector of
        input tiles gathered just before its transform, the transforms with their sums unrolled,
        so the matrices' zero entries drop out (`_nonzero`); the batched GEMM in register
        blocks of output channels x one vector of tiles; the untiling a tile's columns at a time."""
        lanes = self.lanes
        sch = tvm.s_tir.Schedule(module)
        for name in ("A", "B"):
            sch.compute_inline(sch.get_sblock(name))
        for name, parallel in (("input_transform", 2), ("output_transform", 0)):
            block = sch.get_sblock(name)
            *spatial, p, r1, r2 = sch.get_loops(block)
            outer, inner = sch.split(p, [None, lanes])
            first = spatial[parallel]  # the channel
            unrolled = [loop for loop in spatial if loop != first] + [r1, r2]
            sch.reorder(first, outer, *unrolled, inner)
            sch.parallel(first)
            for loop in unrolled:
                sch.unroll(loop)
            sch.vectorize(inner)
            sch.decompose_reduction(block, r1)
            if name == "input_transform":  # a vector of tiles gathered just before its transform
                tiles = sch.get_sblock("input_tiles")
                sch.compute_at(tiles, outer, preserve_unit_loops=True)
                sch.vectorize(sch.get_loops(tiles)[-1])
        gemm = sch.get_sblock("batched_gemm")
        e, u, o, p, rc = sch.get_loops(gemm)
        o_outer, o_inner = sch.split(o, [None, self.gemm_block])
        p_outer, p_inner = sch.split(p, [None, lanes])
        sch.reorder(e, u, o_outer, p_outer, rc, o_inner, p_inner)
        accumulators = sch.cache_write(gemm, 0, "global")
        sch.reverse_compute_at(accumulators, p_outer)
        sch.parallel(sch.fuse(e, u, o_outer))
        sch.unroll(o_inner)
        sch.vectorize(p_inner)
        sch.vectorize(sch.get_loops(accumulators)[-1])
        sch.decompose_reduction(gemm, rc)
        n, o, h, w = sch.get_loops(sch.get_sblock("untile"))
        sch.parallel(sch.fuse(n, o, h))
        sch.unroll(sch.split(w, [None, self.m])[1])  # a tile's columns: affine reads, no division per element
        return sch.mod
