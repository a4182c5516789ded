"""GSPC kernels (core.codegen.gspc_schedule) against torch.nn.functional.conv2d(groups=G), the
convolution matcher they rely on (core.codegen.conv_spec), and the tile-size rules."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import tvm

from core.codegen import build_module
from core.codegen.conv_spec import ConvSpec, NotAConvolution, match_conv
from core.codegen.gspc_schedule import (
    TileError,
    Tiles,
    candidate_tiles,
    check_tiles,
    default_tiles,
    gspc_module,
    pack_weights,
    simd_lanes,
)
from core.compile.target import local_target
from core.ir.serialize import load_operator
from tests.support import CONV_KINDS, EXAMPLES, chain

pytestmark = pytest.mark.tvm


GROUPED = load_operator(EXAMPLES / "grouped_conv.json")


def strided_w_first():
    """unfold W before H (weight columns ordered c, kw, kh), a non-square window, a stride
    on H before the fc and one on W after it."""
    return chain(
        ["C_in", "H", "W"],
        ["C_out", "H/s", "W/s"],
        [
            ("uw", "unfold", {"dim": -1, "K": "Kw"}, ["input"]),
            ("uh", "unfold", {"dim": -2, "K": "Kh"}, ["uw"]),
            ("sh", "stride", {"dim": -2, "S": "s"}, ["uh"]),
            ("fc", "fc", {"out": "C_out", "groups": "G"}, ["sh"]),
            ("sw", "stride", {"dim": -1, "S": "s"}, ["fc"]),
        ],
        variables=CONV_KINDS,
    )


def share_permuted():
    """Syno's standard conv with the weight's axes in the order kw, c, kh."""
    return chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("uh", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("uw", "unfold", {"dim": -1, "K": "K"}, ["uh"]),
            ("sh", "share", {"dims": [2, 0, 1], "out": "C_out"}, ["uw"]),
            ("r1", "reduce", {"dim": 1}, ["sh"]),
            ("r2", "reduce", {"dim": 1}, ["r1"]),
            ("r3", "reduce", {"dim": 1}, ["r2"]),
        ],
        variables=CONV_KINDS,
    )


def one_by_k():
    """A 1 x K window (W only), grouped."""
    return chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [("uw", "unfold", {"dim": -1, "K": "K"}, ["input"]), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["uw"])],
        variables=CONV_KINDS,
    )


CASES = [
    ("G=1", lambda: GROUPED, {"C_in": 8, "C_out": 8, "H": 6, "W": 7, "K": 3, "G": 1}, None),
    ("G=2", lambda: GROUPED, {"C_in": 8, "C_out": 12, "H": 7, "W": 9, "K": 3, "G": 2}, None),
    ("G=4 K=5", lambda: GROUPED, {"C_in": 16, "C_out": 16, "H": 8, "W": 10, "K": 5, "G": 4}, None),
    ("depthwise", lambda: GROUPED, {"C_in": 8, "C_out": 8, "H": 6, "W": 6, "K": 3, "G": 8}, None),
    ("G=2 small tiles", lambda: GROUPED, {"C_in": 8, "C_out": 8, "H": 5, "W": 11, "K": 3, "G": 2}, Tiles(2, 1, 4)),
    (
        "stride 2, 3x5, W first",
        strided_w_first,
        {"C_in": 8, "C_out": 16, "H": 8, "W": 12, "Kh": 3, "Kw": 5, "G": 4, "s": 2},
        None,
    ),
    ("share, weight kw c kh", share_permuted, {"C_in": 4, "C_out": 8, "H": 6, "W": 6, "K": 3}, None),
    ("1x3, G=2", one_by_k, {"C_in": 4, "C_out": 6, "H": 5, "W": 6, "K": 3, "G": 2}, Tiles(3, 2, 6)),
    ("one column per block", lambda: GROUPED, {"C_in": 8, "C_out": 8, "H": 4, "W": 3, "K": 3, "G": 2}, Tiles(4, 2, 1)),
    (
        "one channel, one column",
        lambda: GROUPED,
        {"C_in": 4, "C_out": 4, "H": 3, "W": 1, "K": 3, "G": 4},
        Tiles(1, 1, 1),
    ),
]


@pytest.fixture(scope="module")
def target():
    return local_target(1)


@pytest.mark.parametrize("make, bindings, tiles", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gspc_matches_torch_grouped_conv2d(make, bindings, tiles, target):
    graph = make()
    conv = match_conv(graph, bindings)
    tiles = tiles or default_tiles(conv, simd_lanes(target))
    torch.manual_seed(0)
    module = build_module(graph, bindings).eval()
    weight = dict(module.named_parameters())[conv.weight].detach()
    x = torch.randn(2, *conv.input_shape)
    spec = conv.spec
    expected = F.conv2d(
        x,
        torch.from_numpy(conv.torch_weight(weight.numpy())),
        stride=spec.stride,
        padding=spec.padding,
        groups=spec.groups,
    ).numpy()
    with torch.inference_mode():
        np.testing.assert_allclose(module(x).numpy(), expected, rtol=1e-4, atol=1e-4)  # what the matcher read

    kernel = tvm.compile(gspc_module(conv, 2, tiles), target=target)
    dev = tvm.cpu()
    y = tvm.runtime.empty(expected.shape, "float32", dev)
    kernel["main"](
        tvm.runtime.tensor(x.numpy(), dev), tvm.runtime.tensor(pack_weights(conv, weight.numpy(), tiles), dev), y
    )
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_the_matcher_reads_groups_kernel_stride_and_weight_order():
    conv = match_conv(strided_w_first(), {"C_in": 8, "C_out": 16, "H": 8, "W": 12, "Kh": 3, "Kw": 5, "G": 4, "s": 2})
    assert conv.spec == ConvSpec(8, 16, (3, 5), (2, 2), (1, 2), 4)
    assert conv.output_shape == (16, 4, 6) and conv.weight == "w_fc" and conv.weight_order == ("c", "kw", "kh")
    assert conv.spec.describe() == "conv 8->16, 3x5, stride 2, padding (1, 2), groups 4"
    standard = match_conv(load_operator(EXAMPLES / "conv2d.json"))
    assert standard.spec.groups == 1 and standard.spec.why_not_standard() == ""


@pytest.mark.parametrize(
    "name, node",
    [("involution", "group kernel_groups"), ("depthwise_separable", "fc pointwise"), ("shift_conv", "shift")],
)
def test_operators_that_are_not_convolutions_are_refused_naming_the_node(name, node):
    with pytest.raises(NotAConvolution, match=f"{name} is not a 2-D convolution: {node}"):
        match_conv(load_operator(EXAMPLES / f"{name}.json"))


def test_a_window_on_a_strided_axis_and_groups_cutting_the_window_are_not_convolutions():
    dilated = chain(
        ["C_in", "H", "W"],
        ["C_out", "H/s", "W"],
        [
            ("s", "stride", {"dim": 1, "S": "s"}, ["input"]),
            ("uh", "unfold", {"dim": 1, "K": "K"}, ["s"]),
            ("fc", "fc", {"out": "C_out", "groups": "1"}, ["uh"]),
        ],
        variables=CONV_KINDS,
    )
    with pytest.raises(NotAConvolution, match="unfold uh unfolds .* a strided axis"):
        match_conv(dilated, {"C_in": 2, "C_out": 2, "H": 8, "W": 8, "K": 3, "s": 2})
    with pytest.raises(NotAConvolution, match="fc grouped_fc has 3 groups, which do not divide the 2 input"):
        match_conv(GROUPED, {"C_in": 2, "C_out": 6, "H": 4, "W": 4, "K": 3, "G": 3})


def test_tile_sizes_must_divide_the_channels_per_group(target):
    conv = match_conv(GROUPED, {"C_in": 16, "C_out": 24, "H": 8, "W": 8, "K": 3, "G": 2})  # K_PG 12, C_PG 8
    with pytest.raises(
        TileError,
        match=r"T_O=5 must be a positive divisor of the 12 output channels per group "
        r"\(conv 16->24, 3x3, .*groups 2\); divisors: 1, 2, 3, 4, 6, 12",
    ):
        check_tiles(conv, Tiles(5, 4, 8))
    with pytest.raises(TileError, match="T_I=0 must be a positive divisor of the 8 input channels"):
        gspc_module(conv, 1, Tiles(4, 0, 8))
    with pytest.raises(TileError, match="T_I=16 must be"):
        pack_weights(conv, np.zeros(conv.weight_shape, "float32"), Tiles(4, 16, 8))
    with pytest.raises(TileError, match="register block"):
        check_tiles(conv, Tiles(4, 4, 0))


def test_default_tiles_follow_the_simd_width_and_the_grid_starts_there():
    conv = match_conv(GROUPED, {"C_in": 16, "C_out": 24, "H": 8, "W": 28, "K": 3, "G": 2})
    assert default_tiles(conv, 8) == Tiles(6, 8, 7)  # 8 does not divide K_PG = 12: its largest divisor below
    assert default_tiles(conv, 4) == Tiles(4, 4, 7)
    assert default_tiles(conv, 16).t_o == 12
    grid = candidate_tiles(conv, 8)
    assert grid[0] == default_tiles(conv, 8) and len(set(grid)) == len(grid) > 8
    for tiles in grid:
        check_tiles(conv, tiles)
    assert default_tiles(conv, 8, fixed=(12, 2)) == Tiles(12, 2, 4)  # two vectors per column: a smaller block
    assert candidate_tiles(conv, 8, fixed=(12, 2)) == [Tiles(12, 2, 4), Tiles(12, 2, 2)]
    with pytest.raises(TileError, match="T_I=3 must be"):
        default_tiles(conv, 8, fixed=(12, 3))


def test_simd_lanes_follow_the_target():
    def lanes(**target):
        return simd_lanes(tvm.target.Target({"kind": "llvm", **target}))

    assert lanes(mcpu="skylake-avx512") == 16
    assert lanes(mcpu="haswell") == 8
    assert lanes(mtriple="aarch64-linux-gnu", mcpu="cortex-a72") == 4
