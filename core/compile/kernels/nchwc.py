"""The blocked NCHW[x]c convolution of TVM's x86 schedules as a kernel (kernels.conv): channels
split into blocks kept innermost, so a block of output channels is one vector register and the
input channels of a block are read from one cache line.

    input   [N, C, H, W]       ->  [N, G x C_PG/ib, H', W', ib]      (zero-padded, packed per run)
    weight  [K, C/G, kh, kw]   ->  [G x K_PG/ob, C_PG/ib, kh, kw, ib, ob]   (ahead of time)
    output  [N, G x K_PG/ob, Ho, Wo, ob]  ->  [N, K, Ho, Wo]

Blocks stay inside a group (C_PG, K_PG: channels per group). A block is the SIMD width, a
divisor of the channels between half and all of it, or the channels themselves when fewer;
otherwise the channels are padded up to whole blocks (zero weights, outputs dropped).
A depthwise convolution thus gets blocks of one channel: blocking channels across groups
instead, as TVM's depthwise NCHWc does, was measured 3x slower here after 16 trials (64
channels, 56x56: 0.18 ms against 0.061 ms), MetaSchedule vectorising the plain rows well."""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te

from .conv import ConvKernel


def block(channels: int, lanes: int) -> int:
    """Channels per block: all of them up to `lanes`, else a divisor from lanes/2 to lanes, else lanes (padded)."""
    if channels <= lanes:
        return channels
    divisors = [d for d in range(lanes, (lanes - 1) // 2, -1) if channels % d == 0]
    return divisors[0] if divisors else lanes


class NchwcKernel(ConvKernel):
    def __init__(self, *args):
        super().__init__(*args)
        self.ib, self.ob = block(self.c_pg, self.lanes), block(self.k_pg, self.lanes)
        self.cb, self.kb = -(-self.c_pg // self.ib), -(-self.k_pg // self.ob)  # blocks per group
        self.layout = f"NCHW{self.ib}c (weights OIHW{self.ib}i{self.ob}o)"

    def details(self) -> dict[str, Any]:
        return {"blocks": {"input": self.ib, "output": self.ob}}

    def weight(self, torch_weight: np.ndarray) -> np.ndarray:
        kh, kw = self.conv.spec.kernel
        g = self.conv.spec.groups
        w = torch_weight.reshape(g, self.k_pg, self.c_pg, kh, kw)
        w = np.pad(w, [(0, 0), (0, self.kb * self.ob - self.k_pg), (0, self.cb * self.ib - self.c_pg), (0, 0), (0, 0)])
        w = w.reshape(g, self.kb, self.ob, self.cb, self.ib, kh, kw)
        return w.transpose(0, 1, 3, 5, 6, 4, 2).reshape(g * self.kb, self.cb, kh, kw, self.ib, self.ob)

    def compute(self, x: te.Tensor) -> tuple[te.Tensor, te.Tensor]:
        conv, ib, ob, cb, kb = self.conv, self.ib, self.ob, self.cb, self.kb
        (kh, kw), (sh, sw), g = conv.spec.kernel, conv.spec.stride, conv.spec.groups
        batch, (k, ho, wo) = self.workload.batch, conv.output_shape
        rows, cols = (ho - 1) * sh + kh, (wo - 1) * sw + kw
        packed = te.compute(
            (batch, g * cb, rows, cols, ib),
            lambda n, b, r, q, ci: self.padded(
                x, n, (b // cb) * self.c_pg + (b % cb) * ib + ci, r, q, (b % cb) * ib + ci < self.c_pg
            ),
            name="pack_input",
        )
        weight = te.placeholder((g * kb, cb, kh, kw, ib, ob), "float32", name="w_nchwc")
        rcb, ry = te.reduce_axis((0, cb), "rcb"), te.reduce_axis((0, kh), "ry")
        rx, rci = te.reduce_axis((0, kw), "rx"), te.reduce_axis((0, ib), "rci")
        out = te.compute(
            (batch, g * kb, ho, wo, ob),
            lambda n, b, oh, ow, oc: te.sum(
                packed[n, (b // kb) * cb + rcb, oh * sh + ry, ow * sw + rx, rci] * weight[b, rcb, ry, rx, rci, oc],
                axis=[rcb, ry, rx, rci],
            ),
            name="conv_nchwc",
        )
        y = te.compute(
            (batch, k, ho, wo),
            lambda n, o, oh, ow: out[n, (o // self.k_pg) * kb + (o % self.k_pg) // ob, oh, ow, (o % self.k_pg) % ob],
            name="unpack",
        )
        return weight, y
