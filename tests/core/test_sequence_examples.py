"""Each example sequence gives its known operator: the IR graph it becomes, its costs, and
its torch module equal to the known operator written with torch's own convolutions when
given the same weights."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from core.analysis.legality import check_sequence
from core.codegen import weight_names
from core.codegen.loopnest_ir import result_operator
from core.codegen.loopnest_torch import operator_module
from core.ir.sequence import Sequence, load_sequence, make_step
from tests.support import EXAMPLES

SMALL = {"C_in": 8, "C_out": 8, "H": 8, "W": 8, "K": 3}


def example(name: str):
    return load_sequence(EXAMPLES / "sequences" / f"{name}.json")


def operator(seq: Sequence, bindings=None):
    r = check_sequence(seq, bindings)
    assert r.legal, r.problems()
    return result_operator(r.final, seq.name)


def run(op, weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The operator's torch module with each part's weight [C, C_in/G, Kh, Kw] copied in (one
    contraction per part, in part order: a peeled nest's parts are joined by concat)."""
    module = operator_module(op)
    with torch.no_grad():
        for name, w in zip(weight_names(op.graph).values(), weights, strict=True):
            module.get_parameter(name).copy_(w.reshape(w.shape[0], -1))
        return module(x)


def close(got, want):
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


@pytest.fixture
def x():
    torch.manual_seed(0)
    return torch.randn(2, 8, 8, 8)


def test_every_example_is_legal_at_its_own_sizes():
    for path in sorted((EXAMPLES / "sequences").glob("seq_*.json")):
        seq = load_sequence(path)
        r = check_sequence(seq)
        assert r.legal, (path.name, r.problems())
        for s in result_operator(r.final).summaries():
            assert s.ok, (path.name, s.messages())


@pytest.mark.parametrize("groups", [2, 4, 8])
def test_group_on_co_ci_is_grouped_conv_and_depthwise_when_g_is_c(x, groups):
    op = operator(example("seq_grouped_conv"), {**SMALL, "G": groups})
    assert [g.prim(n).op for g in op.graphs for n in g.topological_order() if n in g.primitive_nodes()] == [
        "unfold",
        "unfold",
        "fc",
    ]
    w = torch.randn(8, 8 // groups, 3, 3)
    close(run(op, [w], x), F.conv2d(x, w, padding=1, groups=groups))
    assert op.totals() == {
        "macs": 8 * 8 // groups * 9 * 64,
        "flops": 2 * 8 * 8 // groups * 9 * 64,
        "params": 8 * 8 // groups * 9,
    }
    assert str(op.summaries()[0].cost.total("params")) == "C_in*C_out*K^2/G"


def test_spatial_bottleneck_is_a_strided_conv_upsampled(x):
    op = operator(example("seq_spatial_bottleneck"), SMALL)
    w = torch.randn(8, 8, 3, 3)
    close(run(op, [w], x), F.interpolate(F.conv2d(x, w, padding=1, stride=2), scale_factor=2, mode="nearest"))
    assert op.totals()["flops"] == 2 * 8 * 8 * 9 * 16  # a quarter of the positions
    assert str(op.summaries()[0].cost.total("flops")) == "C_in*C_out*H*K^2*W/2"


def test_spatial_grouping_convolves_each_strip_alone(x):
    op = operator(example("seq_spatial_grouping"), SMALL)
    w = torch.randn(8, 8, 3, 3)
    strips = [F.conv2d(x[:, :, :4], w, padding=1), F.conv2d(x[:, :, 4:], w, padding=1)]
    close(run(op, [w], x), torch.cat(strips, dim=2))


def test_unroll_group_peels_16_channels_then_groups_the_rest(x):
    op = operator(example("seq_unroll_group"), {**SMALL, "C_out": 24})
    assert op.channels == [16, 8]
    w0, w1 = torch.randn(16, 8, 3, 3), torch.randn(8, 4, 3, 3)
    close(run(op, [w0, w1], x), torch.cat([F.conv2d(x, w0, padding=1), F.conv2d(x, w1, padding=1, groups=2)], 1))
    assert op.totals()["params"] == (16 * 8 + 8 * 4) * 9


def test_split_group_gives_two_differently_grouped_halves(x):
    op = operator(example("seq_split_group"), SMALL)
    w0, w1 = torch.randn(4, 4, 3, 3), torch.randn(4, 2, 3, 3)
    want = torch.cat([F.conv2d(x, w0, padding=1, groups=2), F.conv2d(x, w1, padding=1, groups=4)], 1)
    close(run(op, [w0, w1], x), want)


def test_schedule_only_sequence_keeps_the_convolution(x):
    op = operator(example("seq_schedule"), SMALL)
    w = torch.randn(8, 8, 3, 3)
    close(run(op, [w], x), F.conv2d(x, w, padding=1))
    assert op.totals() == {"macs": 8 * 8 * 9 * 64, "flops": 2 * 8 * 8 * 9 * 64, "params": 8 * 8 * 9}


@pytest.mark.parametrize(
    "step, reference",
    [
        (("bottleneck", {"loop": "co", "B": 2}), lambda x, w: F.conv2d(x, w, padding=1).repeat_interleave(2, dim=1)),
        (("bottleneck", {"loop": "ci", "B": 2}), lambda x, w: F.conv2d(x[:, ::2], w, padding=1)),
        (("bottleneck", {"loop": "kh", "B": 3}), lambda x, w: F.conv2d(x, w, padding=(0, 1))),
    ],
)
def test_other_bottlenecks(x, step, reference):
    op = operator(Sequence("conv2d", (make_step(*step),), SMALL))
    shape = {"co": (4, 8, 3, 3), "ci": (8, 4, 3, 3), "kh": (8, 8, 1, 3)}[step[1]["loop"]]
    w = torch.randn(shape)
    close(run(op, [w], x), reference(x, w))


def test_dense_nest():
    op = operator(Sequence("dense", (make_step("group", {"loops": ["co", "ci"], "G": 2}),), {"C_in": 6, "C_out": 4}))
    x, w = torch.randn(3, 6), torch.randn(4, 3)
    close(run(op, [w], x), torch.cat([x[:, :3] @ w[:2].T, x[:, 3:] @ w[2:].T], dim=1))
