"""Convolution as im2col + GEMM, as a kernel (kernels.conv): the input's windows are copied
once into a matrix, so the convolution becomes one matrix product per group, the shape
MetaSchedule's multi-level tiling (and any GEMM) handles best, at the cost of kh x kw copies
of the input.

    input   [N, C, H, W]      ->  col [N, G, C_PG x kh x kw, Ho x Wo]   (zero-padded, per run)
    weight  [K, C/G, kh, kw]  ->  [K, C_PG x kh x kw]                   (torch's, flattened)
    output  y[n, k] = weight[k] @ col[n, group of k], read as [N, K, Ho, Wo]

The copy reads through the zero padding (an if-then-else), which keeps MetaSchedule from
inlining it into the product and undoing the algorithm."""

from __future__ import annotations

import numpy as np
from tvm import te

from .conv import ConvKernel


class Im2colKernel(ConvKernel):
    layout = "NCHW (im2col matrix)"

    def weight(self, torch_weight: np.ndarray) -> np.ndarray:
        return torch_weight.reshape(torch_weight.shape[0], -1)

    def compute(self, x: te.Tensor) -> tuple[te.Tensor, te.Tensor]:
        conv = self.conv
        (kh, kw), (sh, sw), g = conv.spec.kernel, conv.spec.stride, conv.spec.groups
        batch, (k, ho, wo) = self.workload.batch, conv.output_shape
        window, depth = kh * kw, self.c_pg * kh * kw
        col = te.compute(
            (batch, g, depth, ho * wo),
            lambda n, gi, r, p: self.padded(
                x,
                n,
                gi * self.c_pg + r // window,
                (p // wo) * sh + (r % window) // kw,
                (p % wo) * sw + r % kw,
            ),
            name="im2col",
        )
        weight = te.placeholder((k, depth), "float32", name="w_matrix")
        rr = te.reduce_axis((0, depth), "rr")
        y = te.compute(
            (batch, k, ho, wo),
            lambda n, o, oh, ow: te.sum(weight[o, rr] * col[n, o // self.k_pg, rr, oh * wo + ow], axis=rr),
            name="gemm",
        )
        return weight, y
