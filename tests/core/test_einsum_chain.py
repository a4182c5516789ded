"""Chains of views, shares and reduces as one einsum (core.codegen.einsum_chain): the module
computes what the primitive-by-primitive module computes, forward and backward, on the chains
the search samples; it never materialises the product the step-by-step module makes; where
the input is read through a window it sums first what core.analysis.staging plans to."""

from __future__ import annotations

import pytest
import torch

from core.analysis import staging
from core.analysis.kernel_stages import reductions
from core.analysis.shapes import concrete_shapes, infer_shapes
from core.codegen import build_module, module_source
from core.codegen.einsum_chain import einsum_chains
from core.codegen.torch_plan import make_plan
from core.data.conv_fit import ConvShape, layer_bindings
from core.ir.serialize import load_operator
from core.search.base import Budget
from core.search.canvas_sampler import CanvasSampler
from core.search.mcts import SynoMCTS
from core.search.syno import SynoRandom
from tests.core.torch_checks import largest_value, same_as_primitives
from tests.support import CONV_KINDS, EXAMPLES, chain, reduction_orders

LAYER = ConvShape(16, 16, 6, 5, 3)  # odd spatial sizes, channels that Canvas's groups and Syno's s divide
SMALL_G = {"g": 2}  # Syno's g is 8 (C_in/g^2 needs 64 channels); 2 keeps its compound sizes whole at 16


def _sampled(strategy, count: int, seed: int) -> list:
    conv = load_operator(EXAMPLES / "conv2d.json")
    return [c.graph for c in strategy(conv, Budget(flops=1.0, max_primitives=8), seed=seed).ask(count)]


@pytest.mark.parametrize("strategy", [SynoRandom, SynoMCTS, CanvasSampler], ids=lambda s: s.__name__)
def test_sampled_operators_compute_what_their_primitives_do(strategy):
    chained = staged = 0
    for graph in _sampled(strategy, 30, seed=15):  # staged at seeds 10-15: random 4,1,4,2,3,5; MCTS 1,1,5,1,1,8
        bindings = {**layer_bindings(graph, LAYER), **SMALL_G}
        source = same_as_primitives(graph, bindings, (2, LAYER.c_in, LAYER.height, LAYER.width))
        chained += "einsum = " in source
        staged += "first stage of the einsum" in source
    if strategy is not CanvasSampler:  # Canvas's micro-DAGs have no shares; Syno's chains are mostly such chains
        assert chained >= 15 and staged >= 2, (chained, staged)


def _conv_like(steps, out=("C_out", "H", "W"), **sizes):
    bindings = {"C_in": 6, "C_out": 4, "H": 5, "W": 7, "K": 3, "s": 2, **sizes}
    return chain(["C_in", "H", "W"], list(out), steps, variables={**CONV_KINDS, "s": "coefficient"}, bindings=bindings)


PRODUCTS = {
    # y[o] = sum_{s,t,c} w3[s, t, o, c] w2[t, o, c] w1[o, c] x[c], rolled: three weighted products in a row
    "shares in a row": _conv_like(
        [
            ("w1", "share", {"dims": [0], "out": "C_out"}, ["input"]),
            ("roll", "shift", {"dim": 3, "amount": 1}, ["w1"]),
            ("w2", "share", {"dims": [0, 1], "out": "s"}, ["roll"]),
            ("w3", "share", {"dims": [0, 1, 2], "out": "s"}, ["w2"]),
            ("r1", "reduce", {"dim": 0}, ["w3"]),
            ("r2", "reduce", {"dim": 0}, ["r1"]),
            ("r3", "reduce", {"dim": 1}, ["r2"]),
        ]
    ),
    # views between a share and the reduce of C_in: split, an expand, merges
    "views between a share and its reduce": _conv_like(
        [
            ("w", "share", {"dims": [0], "out": "C_in*s"}, ["input"]),
            ("sp", "split", {"dim": 0, "B": "s"}, ["w"]),
            ("ex", "expand", {"dim": 1, "size": "C_out/s"}, ["sp"]),
            ("mg", "merge", {"dim": 1}, ["ex"]),
            ("rc", "reduce", {"dim": 0}, ["mg"]),
            ("rd", "reduce", {"dim": 1}, ["rc"]),
        ]
    ),
    # an expand of C_out above a share that sums C_in: a 1x1 convolution written the long way
    "an expand of C_out above a share": _conv_like(
        [
            ("ex", "expand", {"dim": 0, "size": "C_out"}, ["input"]),
            ("w", "share", {"dims": [0, 1], "out": None}, ["ex"]),
            ("rc", "reduce", {"dim": 1}, ["w"]),
        ]
    ),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_a_product_between_a_share_and_its_reduce_is_never_materialised(name):
    graph = PRODUCTS[name]
    source = same_as_primitives(graph)
    assert "einsum = " in source
    x = torch.randn(2, 6, 5, 7)
    ends = max(x.numel(), 2 * 4 * 5 * 7)  # the input, the output
    assert largest_value(build_module(graph), x) <= ends < largest_value(build_module(graph, layers=False), x)


def test_a_window_is_opened_after_the_sums_staging_plans_first():
    # y[o, h, w'] = sum_{c,k,w} x[c, h + k - 1, w] * wt[o, c]: the plan sums W on the input,
    # then windows the [C_in, H] partial sum and contracts it with the weight, as the TVM kernel
    # stages it (the chain's expand of W after the sum is a broadcast, never computed)
    graph = reduction_orders()
    plan = make_plan(graph)
    (chain_,) = einsum_chains(plan, set()).values()
    report = infer_shapes(graph)
    (tvm_reduction,) = reductions(graph, report, concrete_shapes(graph, report, plan.bindings), plan.bindings)["sh"]
    tvm_plan = staging.plan(tvm_reduction)
    assert chain_.first is not None and chain_.first.weight_first == tvm_plan.weight_first
    assert tuple(letter.size for letter in chain_.first.kept) == tvm_plan.stages[0].shape == (1, 8, 6)
    source = same_as_primitives(graph)
    assert "first stage of the einsum below" in source and source.index("rf_") < source.index(".unfold(")


def test_a_step_the_letters_cannot_follow_ends_the_chain_before_it():
    # a roll of the merged [C_out * C_in/s] axis is no letter's roll: the chain ends at the merge
    graph = _conv_like(
        [
            ("w", "share", {"dims": [0], "out": "C_out"}, ["input"]),
            ("sp", "split", {"dim": 1, "B": "s"}, ["w"]),
            ("rs", "reduce", {"dim": 2}, ["sp"]),
            ("mg", "merge", {"dim": 0}, ["rs"]),
            ("roll", "shift", {"dim": 0, "amount": 1}, ["mg"]),
            ("sp2", "split", {"dim": 0, "B": "C_in/s"}, ["roll"]),
            ("rc", "reduce", {"dim": 1}, ["sp2"]),
        ]
    )
    source = same_as_primitives(graph)
    assert "einsum = share 'w', split 'sp', reduce 'rs', merge 'mg': [C_in*C_out/s, H, W]" in source
    assert "t_roll = torch.roll(t_mg, 1, 1)" in source


def test_a_convolution_with_a_window_stays_conv2d_inside_a_chain():
    graph = _conv_like(
        [
            ("uh", "unfold", {"dim": -2, "K": "K"}, ["input"]),
            ("uw", "unfold", {"dim": -1, "K": "K"}, ["uh"]),
            ("sh", "share", {"dims": [0, 1, 2], "out": "C_out"}, ["uw"]),
            ("r0", "reduce", {"dim": 1}, ["sh"]),
            ("r1", "reduce", {"dim": 1}, ["r0"]),
            ("r2", "reduce", {"dim": 1}, ["r1"]),
            ("ex", "expand", {"dim": 0, "size": "s"}, ["r2"]),
            ("w2", "share", {"dims": [0, 1], "out": "s"}, ["ex"]),
            ("r3", "reduce", {"dim": 1}, ["w2"]),
            ("r4", "reduce", {"dim": 0}, ["r3"]),
        ]
    )
    source = same_as_primitives(graph)
    assert "conv 6->4, 3x3" in source and "einsum = expand 'ex', share 'w2'" in source


def test_the_module_source_names_the_nodes_of_a_chain():
    source = module_source(PRODUCTS["shares in a row"])
    assert "einsum = share 'w1', shift 'roll', share 'w2', share 'w3' + reduce 'r1', 'r2', 'r3'" in source
