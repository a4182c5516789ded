"""Winograd's minimal filtering F(m x m, 3x3) as a kernel (kernels.conv), for 3x3 convolutions
at stride 1: each m x m output tile costs (m + 2)^2 multiplications per channel pair instead of
9 m^2 (2.25x fewer for m = 2, 4x for m = 4), paid for with transforms of the input and output.

    U = G g G^T          the weight, per (output, input) channel: [a, a, K, C_PG]  (ahead of time)
    V = B^T d B          each a x a input tile d (a = m + 2; the image zero-padded): [a, a, C, P]
    M = U . V            a x a matrix products over the input channels of a group: [a, a, K, P]
    Y = A^T M A          the m x m output tiles, cut to [N, K, Ho, Wo]

with P the tiles of all images. The matrices come from Toom-Cook interpolation at the points
0, 1, -1 (m = 2) and 2, -2 (m = 4) and infinity (`transforms`). F(4x4) is used unless the
output is smaller than 8 x 8, where F(2x2) wastes less on partial tiles."""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te
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


class WinogradKernel(ConvKernel):
    def __init__(self, *args):
        super().__init__(*args)
        _, ho, wo = self.conv.output_shape
        self.m = 4 if min(ho, wo) >= 8 else 2
        self.alpha = self.m + 2
        self.a, self.b, self.g = transforms(self.m)
        self.layout = f"NCHW (Winograd F({self.m}x{self.m},3x3) tiles)"

    def details(self) -> dict[str, Any]:
        return {"tile": f"F({self.m}x{self.m},3x3)"}

    def weight(self, torch_weight: np.ndarray) -> np.ndarray:
        return np.einsum("ek,ockl,ul->euoc", self.g, torch_weight.astype(np.float64), self.g)

    def compute(self, x: te.Tensor) -> tuple[te.Tensor, te.Tensor]:
        conv, m, alpha = self.conv, self.m, self.alpha
        batch, (k, ho, wo), c = self.workload.batch, conv.output_shape, conv.input_shape[0]
        tiles_h, tiles_w = -(-ho // m), -(-wo // m)
        per_image = tiles_h * tiles_w
        a = const_matrix(self.a.astype(np.float32), "A")
        b = const_matrix(self.b.astype(np.float32), "B")
        tiles = te.compute(
            (c, batch * per_image, alpha, alpha),
            lambda ci, p, i, j: self.padded(
                x, p // per_image, ci, (p % per_image) // tiles_w * m + i, p % tiles_w * m + j
            ),
            name="input_tiles",
        )
        ri, rj = te.reduce_axis((0, alpha), "ri"), te.reduce_axis((0, alpha), "rj")
        v = te.compute(
            (alpha, alpha, c, batch * per_image),
            lambda e, u, ci, p: te.sum(tiles[ci, p, ri, rj] * b[ri, e] * b[rj, u], axis=[ri, rj]),
            name="input_transform",
        )
        weight = te.placeholder((alpha, alpha, k, self.c_pg), "float32", name="w_winograd")
        rc = te.reduce_axis((0, self.c_pg), "rc")
        product = te.compute(
            (alpha, alpha, k, batch * per_image),
            lambda e, u, o, p: te.sum(weight[e, u, o, rc] * v[e, u, o // self.k_pg * self.c_pg + rc, p], axis=rc),
            name="batched_gemm",
        )
        re, ru = te.reduce_axis((0, alpha), "re"), te.reduce_axis((0, alpha), "ru")
        out_tiles = te.compute(
            (k, batch * per_image, m, m),
            lambda o, p, i, j: te.sum(product[re, ru, o, p] * a[re, i] * a[ru, j], axis=[re, ru]),
            name="output_transform",
        )
        y = te.compute(
            (batch, k, ho, wo),
            lambda n, o, h, w: out_tiles[o, n * per_image + h // m * tiles_w + w // m, h % m, w % m],
            name="untile",
        )
        return weight, y
