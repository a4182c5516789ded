"""TVM code generation: every example and every primitive's lowering compiled with
TVM and run against the torch module on the same input and weights; the stage
structure (lazy views, pad stages, one stage per contraction, rfactor split);
argument order; TVMScript; the errors users see."""

from __future__ import annotations

import pytest

from core.codegen import CodegenError, build_module
from core.codegen.to_tvm import lower, tvmscript
from core.codegen.tvm_views import VIEWS
from core.errors import TesseraError
from core.ir.serialize import load_operator
from tests.core.primitive_cases import CASES, TINY
from tests.core.tvm_checks import assert_same, blocks, kernel_flops, run_both
from tests.support import EXAMPLES, chain, reduction_orders

pytestmark = pytest.mark.tvm

SMALL = {"C_in": 8, "C_out": 8, "H": 6, "W": 7, "K": 3, "G": 2, "g": 2, "s": 2}


# -- the examples ----------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_every_example_matches_the_torch_module(path):
    graph = load_operator(path)
    got, want, script = run_both(graph, {k: v for k, v in SMALL.items() if k in graph.mentioned_variables()})
    assert_same(got, want)
    views = {n for n in graph.primitive_nodes() if type(graph.prim(n)) in VIEWS}
    assert views and not views & set(blocks(script)), "views must be index remappings, not stages"


def test_conv2d_is_a_pad_stage_and_one_contraction():
    got, want, script = run_both(load_operator(EXAMPLES / "conv2d.json"), {**SMALL, "K": 5})
    assert_same(got, want)
    assert blocks(script) == ["pad_x", "share"]
    assert "if_then_else" not in script.split('T.sblock("share")')[1], "padding stays out of the contraction"


# -- each primitive's lowering (tests/core/primitive_cases.py) ----------------------------------
@pytest.mark.parametrize("name", CASES)
def test_primitive_lowering_matches_the_torch_module(name):
    out, steps, bindings = CASES[name]
    got, want, _ = run_both(chain(["C", "H", "W"], out, steps, bindings=bindings))
    assert_same(got, want)


def test_unfold_after_a_view_that_hides_the_axis_materialises_it_first():
    out, steps, bindings = CASES["stride_then_unfold"]
    _, _, script = run_both(chain(["C", "H", "W"], out, steps, bindings=bindings))
    assert blocks(script) == ["u_src", "pad_u_src", "r"]


# -- rfactor: reductions split where a one-to-many view would multiply the work ----------------
def test_reduce_over_channels_after_unfold_is_summed_before_the_window():
    # y[h, w] = sum_{c,k} x[c, h + k - 1, w]: t = sum_c x first (C*H*W), then K*H*W, not C*K*H*W
    g = chain(
        ["C", "H", "W"],
        ["H", "W"],
        [
            ("u", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("rc", "reduce", {"dim": 0}, ["u"]),
            ("rk", "reduce", {"dim": 0}, ["rc"]),
        ],
        bindings={**TINY, "K": 3},
    )
    got, want, script = run_both(g)
    assert_same(got, want)
    assert blocks(script) == ["rc_rf", "pad_rc_rf", "rc"]
    assert "T.grid(2, 5, 4, 6)" in script and "T.grid(2, 5, 4, 3)" in script  # C then K, never C*K


def test_contraction_whose_weight_skips_the_window_is_split_in_two_stages():
    g = chain(
        ["C", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("u", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("sh", "share", {"dims": [0], "out": "C_out"}, ["u"]),
            ("rc", "reduce", {"dim": 1}, ["sh"]),
            ("rk", "reduce", {"dim": 1}, ["rc"]),
        ],
        bindings={**TINY, "K": 3, "C_out": 5},
    )
    got, want, script = run_both(g)
    assert_same(got, want)
    assert blocks(script) == ["sh_rf", "pad_sh_rf", "sh"]


def test_the_cheaper_reduction_order_is_built():
    # both first (the weight in stage 1, C_out carried): 2*H*C_out*C*W + C_out*H*K = 5520 FLOPs;
    # W alone first, the weight after it: C*H*W + 2*C_out*H*C*K = 336 + 2304 = 2640 (one stage: 16128)
    g = reduction_orders()
    lowered = lower(g, batch=1)
    assert kernel_flops(lowered) == 8 * 6 * 7 + 2 * 8 * 6 * 8 * 3
    script = lowered.module().script()
    assert blocks(script) == ["sh_rf", "pad_sh_rf", "sh", "y"]
    assert "T.grid(1, 8, 6, 7)" in script  # stage 1 sums W on the input, without the weight
    got, want, _ = run_both(g)
    assert_same(got, want)


@pytest.mark.parametrize("fn", ["avg", "max"])
def test_fold_over_channels_after_unfold_is_staged(fn):
    g = chain(
        ["C", "H", "W"],
        ["K", "H", "W"],
        [("u", "unfold", {"dim": 2, "K": "K"}, ["input"]), ("f", "fold", {"dim": 0, "fn": fn}, ["u"])],
        bindings={**TINY, "K": 3},
    )
    got, want, script = run_both(g)
    assert_same(got, want)
    assert blocks(script) == ["f_rf", "pad_f_rf", "y"]  # the second stage only gathers: a view, read by y


def test_conv2d_is_not_split_because_its_weight_needs_the_window():
    _, _, script = run_both(load_operator(EXAMPLES / "conv2d.json"), SMALL)
    assert not any(b.endswith("_rf") for b in blocks(script))


# -- arguments, script, errors ------------------------------------------------------------------
def test_arguments_are_input_then_the_torch_parameters_in_order_then_output():
    graph = load_operator(EXAMPLES / "gated_separable.json")
    lowered = lower(graph, SMALL, batch=3)
    module = build_module(graph, SMALL)
    names = [name for name, _ in module.named_parameters()]
    assert [p.name for p in lowered.func.params] == ["x", *names, "horizontal"]
    assert [(w.name, w.shape) for w in lowered.weights] == [(n, tuple(p.shape)) for n, p in module.named_parameters()]
    assert lowered.input_shape == (3, 8, 6, 7) and lowered.output_shape == (3, 8, 6, 7)
    assert "x: T.Buffer((3, 8, 6, 7)" in lowered.module().script()


def test_tvmscript_uses_the_node_names():
    script = tvmscript(load_operator(EXAMPLES / "depthwise_separable.json"), SMALL)
    assert "def main(x: T.Buffer((1, 8, 6, 7)" in script
    for name in ("w_depthwise", "w_pointwise", 'T.sblock("depthwise")', 'T.sblock("pointwise")'):
        assert name in script


def test_invalid_graph_is_refused_naming_the_node():
    g = chain(["C", "H", "W"], ["C", "H", "W"], [("bad", "fold", {"dim": 5}, ["input"])], bindings=TINY)
    with pytest.raises(CodegenError, match="fold bad"):
        lower(g)


def test_missing_binding_is_a_clear_error():
    g = chain(["C", "H", "W"], ["C", "K", "H", "W"], [("u", "unfold", {"dim": 1, "K": "K"}, ["input"])], bindings=TINY)
    with pytest.raises(TesseraError, match="unfold u dim 1: .*K"):
        lower(g)


def test_a_tensor_beyond_32_bit_indexing_names_its_node():
    graph = load_operator(EXAMPLES / "conv2d.json")
    with pytest.raises(TesseraError, match=r"share share: its tensor .* has 38,654,705,664 elements, more than 2\^31"):
        lower(graph, {"C_in": 1, "C_out": 2**20, "H": 64, "W": 64, "K": 3})


def test_batch_must_be_positive():
    with pytest.raises(CodegenError, match="batch size must be positive"):
        lower(load_operator(EXAMPLES / "conv2d.json"), SMALL, batch=0)
