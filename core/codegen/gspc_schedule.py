"""Grouped Spatial Pack Convolution (GSPC; Gibson's thesis, docs/papers.md section 5) as a
TVM kernel for an operator that is a grouped 2-D convolution (core.codegen.conv_spec).

TVM's default lowering of a grouped conv reads the input channel block of each output
channel group through an index computation and cannot vectorise over output channels
of one group; GSPC lays the data out so that it can:

    weights  [K, C/G, kh, kw]  ->  g x (K_PG/T_O) x (C_PG/T_I) x kh x kw x T_I x T_O   (ahead of time)
    input    [N, C, H, W]      ->  g x N x (C_PG/T_I) x H' x T_I x W'                  (zero-padded)
    output   g x N x (K_PG/T_O) x Ho x Wo' x T_O in registers, stored to [N, K, Ho, Wo]

with K_PG, C_PG the output and input channels per group. T_O output channels form one
vector register (T_O defaults to the SIMD width), T_I input channels one unrolled block,
and `w` output columns are accumulated in registers together (Wo' is Wo rounded up to a
multiple of w; the extra columns are computed and dropped). The hand-written schedule
parallelises over g x N x K_PG/T_O x Ho, vectorises T_O and unrolls the register block,
so the kernel is fast untuned. Importing this module imports TVM: worker processes only."""

from __future__ import annotations

from dataclasses import dataclass
from math import log2

import numpy as np
import tvm
from tvm import te, tirx
from tvm.target import codegen

from .conv_spec import ConvMatch
from .errors import CodegenError

_REGISTERS = 12  # vector registers kept for accumulators (x86 has 16, AArch64 32)


class TileError(CodegenError):
    """Tile sizes that do not fit the convolution (they must divide the channels per group)."""


@dataclass(frozen=True)
class Tiles:
    t_o: int  # output channels per vector: the innermost axis of weights and packed output
    t_i: int  # input channels per packed block
    w: int  # output columns accumulated together in registers

    def layout(self) -> str:
        """What the store's layout column says, e.g. 'NCHW (packed T_O=8,T_I=4)'."""
        return f"NCHW (packed T_O={self.t_o},T_I={self.t_i})"


def simd_lanes(target: tvm.target.Target) -> int:
    """float32 lanes of the target's vectors: 16 with AVX-512, 8 with AVX, else 4 (SSE, NEON)."""
    for feature, lanes in (("avx512f", 16), ("avx", 8)):
        if codegen.llvm_cpu_has_features([feature], target):
            return lanes
    return 4


def default_tiles(conv: ConvMatch, lanes: int, fixed: tuple[int, int] | None = None) -> Tiles:
    """T_O the SIMD width when it divides K_PG (else its largest divisor below), T_I likewise
    for C_PG, or (T_O, T_I) = `fixed`; and the widest register block of output columns for
    that T_O (see `_column_tile`)."""
    k_pg, c_pg = _per_group(conv)
    if fixed is None:
        t_o, t_i = _largest_divisor(k_pg, lanes), _largest_divisor(c_pg, lanes)
    else:
        check_tiles(conv, Tiles(*fixed, 1))
        t_o, t_i = fixed
    return Tiles(t_o, t_i, _column_tile(conv.output_shape[2], t_o, lanes))


def candidate_tiles(conv: ConvMatch, lanes: int, fixed: tuple[int, int] | None = None) -> list[Tiles]:
    """The tuning grid: T_O among the divisors of K_PG from half to four SIMD widths, T_I
    among the divisors of C_PG from 2 to two SIMD widths (or (T_O, T_I) = `fixed`), each
    with its widest register block and half that. The default comes first, then points
    differing in one knob (T_O before T_I before the block), then in two, then three;
    nearer sizes first."""
    k_pg, c_pg = _per_group(conv)
    width = conv.output_shape[2]
    default = default_tiles(conv, lanes, fixed)
    t_os, t_is = {default.t_o}, {default.t_i}
    if fixed is None:
        t_os |= {d for d in _divisors(k_pg) if lanes // 2 <= d <= 4 * lanes}
        t_is |= {d for d in _divisors(c_pg) if 2 <= d <= 2 * lanes}
    blocks = {t_o: _column_tile(width, t_o, lanes) for t_o in t_os}
    grid = {Tiles(t_o, t_i, w) for t_o in t_os for t_i in t_is for w in {blocks[t_o], max(1, blocks[t_o] // 2)}}

    def distance(t: Tiles) -> tuple:
        same = (t.t_o == default.t_o, t.t_i == default.t_i, t.w == blocks[t.t_o])
        return 3 - sum(same), same, abs(log2(t.t_o / default.t_o)) + abs(log2(t.t_i / default.t_i)), -t.t_o, -t.w

    return sorted(grid, key=distance)


def check_tiles(conv: ConvMatch, tiles: Tiles) -> None:
    """TileError unless T_O divides K_PG, T_I divides C_PG and all are positive."""
    k_pg, c_pg = _per_group(conv)
    for name, value, channels, what in (("T_O", tiles.t_o, k_pg, "output"), ("T_I", tiles.t_i, c_pg, "input")):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1 or channels % value:
            raise TileError(
                f"{name}={value!r} must be a positive divisor of the {channels} {what} channels per "
                f"group ({conv.spec.describe()}); divisors: {', '.join(map(str, _divisors(channels)))}"
            )
    if not isinstance(tiles.w, int) or isinstance(tiles.w, bool) or tiles.w < 1:
        raise TileError(f"the register block of output columns must be a positive integer, got {tiles.w!r}")


def pack_weights(conv: ConvMatch, weight: np.ndarray, tiles: Tiles) -> np.ndarray:
    """The operator's weight (its torch module's parameter) in GSPC's layout
    g x (K_PG/T_O) x (C_PG/T_I) x kh x kw x T_I x T_O: done once, ahead of time."""
    check_tiles(conv, tiles)
    k_pg, c_pg = _per_group(conv)
    kh, kw = conv.spec.kernel
    w = conv.torch_weight(weight).reshape(
        conv.spec.groups, k_pg // tiles.t_o, tiles.t_o, c_pg // tiles.t_i, tiles.t_i, kh, kw
    )
    return np.ascontiguousarray(w.transpose(0, 1, 3, 5, 6, 4, 2), dtype=np.float32)


def gspc_module(conv: ConvMatch, batch: int, tiles: Tiles) -> tvm.IRModule:
    """The scheduled kernel: main(x [N, C, H, W], packed weights, y [N, K, Ho, Wo])."""
    check_tiles(conv, tiles)
    func = te.create_prim_func(list(_compute(conv, batch, tiles))).with_attr("global_symbol", "main")
    sch = tvm.s_tir.Schedule(tvm.IRModule({"main": func}))
    _schedule(sch, tiles)
    return sch.mod


def _compute(conv: ConvMatch, batch: int, tiles: Tiles) -> tuple[te.Tensor, te.Tensor, te.Tensor]:
    spec = conv.spec
    if isinstance(spec.padding, str):  # an operator's convolution has its padding in numbers
        raise CodegenError(f"GSPC needs the padding in numbers, not {spec.padding!r}")
    c, h, w = conv.input_shape
    k, ho, wo = conv.output_shape
    (kh, kw), (sh, sw), (top, left), g = spec.kernel, spec.stride, spec.padding, spec.groups
    k_pg, c_pg = _per_group(conv)
    t_o, t_i = tiles.t_o, tiles.t_i
    wo_packed = -(-wo // tiles.w) * tiles.w
    rows, cols = (ho - 1) * sh + kh, (wo_packed - 1) * sw + kw  # what the windows read, padding included
    x = te.placeholder((batch, c, h, w), "float32", name="x")
    weights = te.placeholder((g, k_pg // t_o, c_pg // t_i, kh, kw, t_i, t_o), "float32", name="w_packed")
    zero = tirx.const(0.0, "float32")
    packed = te.compute(
        (g, batch, c_pg // t_i, rows, t_i, cols),
        lambda gi, n, co, r, ci, q: tirx.if_then_else(
            tirx.all(r >= top, r < h + top, q >= left, q < w + left),
            x[n, gi * c_pg + co * t_i + ci, r - top, q - left],
            zero,
        ),
        name="pack_input",
    )
    rco, rkh = te.reduce_axis((0, c_pg // t_i), "rco"), te.reduce_axis((0, kh), "rkh")
    rkw, rci = te.reduce_axis((0, kw), "rkw"), te.reduce_axis((0, t_i), "rci")
    out = te.compute(
        (g, batch, k_pg // t_o, ho, wo_packed, t_o),
        lambda gi, n, ko, oh, ow, ki: te.sum(
            packed[gi, n, rco, oh * sh + rkh, rci, ow * sw + rkw] * weights[gi, ko, rco, rkh, rkw, rci, ki],
            axis=[rco, rkh, rkw, rci],
        ),
        name="gspc",
    )
    y = te.compute(
        (batch, k, ho, wo), lambda n, o, oh, ow: out[o // k_pg, n, (o % k_pg) // t_o, oh, ow, o % t_o], name="unpack"
    )
    return x, weights, y


def _schedule(sch: tvm.s_tir.Schedule, tiles: Tiles) -> None:
    block = sch.get_sblock("gspc")
    g, n, ko, oh, ow, ki, rco, rkh, rkw, rci = sch.get_loops(block)
    owo, owi = sch.split(ow, [None, tiles.w])
    sch.reorder(g, n, ko, oh, owo, rco, rkh, rkw, rci, owi, ki)
    accumulate = sch.cache_write(block, 0, "local")  # w x T_O accumulators, kept in registers
    sch.reverse_compute_at(accumulate, owo)
    sch.parallel(sch.fuse(g, n, ko, oh))
    sch.unroll(rci)
    sch.unroll(owi)
    if tiles.t_o > 1:
        sch.vectorize(ki)
    # each register block goes straight into the [N, K, Ho, Wo] output (T_O rows of w contiguous
    # columns; those past Wo are dropped) instead of a packed output unpacked in a pass of its own,
    # which cost about 15% of a 64-channel 56x56 grouped conv
    sch.reverse_compute_inline(sch.get_sblock("unpack"))
    block_loops = sch.get_loops(accumulate)[2:]  # below the parallel loop and owo: TVM drops those of extent 1
    if len(block_loops) == 2:
        column, channel = block_loops
        sch.reorder(channel, column)
    if block_loops:
        sch.vectorize(sch.get_loops(accumulate)[-1])
    sch.decompose_reduction(block, rco)  # after parallel and vectorize (docs/tvm.md)
    stage = sch.get_sblock("pack_input")
    sch.parallel(sch.fuse(*sch.get_loops(stage)[:4]))


def _per_group(conv: ConvMatch) -> tuple[int, int]:
    """K_PG, C_PG: output and input channels per group."""
    g = conv.spec.groups
    return conv.spec.out_channels // g, conv.spec.in_channels // g


def _column_tile(width: int, t_o: int, lanes: int) -> int:
    """Output columns per register block: as many as `_REGISTERS` accumulators of T_O
    channels allow, a divisor of the width when one is at least half that, else padded."""
    most = max(1, _REGISTERS // -(-t_o // lanes))
    if width <= most:
        return width
    divisor = _largest_divisor(width, most)
    return divisor if 2 * divisor >= most else most


def _largest_divisor(n: int, at_most: int) -> int:
    return max(d for d in _divisors(n) if d <= max(1, at_most))


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]
