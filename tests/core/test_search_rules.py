"""Canonicalization rules and shape distance, each on its own."""

import pytest
import torch

from core.codegen.to_torch import build_module
from core.ir.graph import OperatorGraph
from core.ir.symbolic import parse_size
from core.ir.tensor import Dim, TensorType
from core.search import canonical
from core.search.chain import Step, chain_graph
from core.search.distance import shape_distance

S = Step.of


def _t(*sizes, spatial=2):
    return TensorType(Dim(parse_size(s), i >= len(sizes) - spatial) for i, s in enumerate(sizes))


# (rule, redundant pair top-down, canonical twin computing the same function or None)
PAIRS = [
    (canonical.expand_then_reduce, [S("expand", dim=0, size="K"), S("reduce", dim=0)], None),
    (canonical.split_then_merge, [S("split", dim=0, B="K"), S("merge", dim=0)], []),
    (canonical.shifts_cancel, [S("shift", dim=2, amount=1), S("shift", dim=2, amount=-1)], []),
    (
        canonical.view_above_reduce,
        [S("shift", dim=2, amount=1), S("reduce", dim=0)],
        [S("reduce", dim=0), S("shift", dim=1, amount=1)],
    ),
    (canonical.reduce_order, [S("reduce", dim=2), S("reduce", dim=1)], [S("reduce", dim=1), S("reduce", dim=1)]),
]
# a view above a reduce of an axis it does not touch, the twin summing first, and the shapes to run both at
VIEW_PAIRS = [
    (
        [S("split", dim=1, B="K"), S("reduce", dim=0)],
        [S("reduce", dim=0), S("split", dim=0, B="K")],
        ["K", "C", "H", "W"],
        ["C/K", "K", "H", "W"],
    ),
    (
        [S("merge", dim=1), S("reduce", dim=0)],
        [S("reduce", dim=0), S("merge", dim=0)],
        ["C", "K", "K", "H", "W"],
        ["K*K", "H", "W"],
    ),
    (
        [S("expand", dim=0, size="K"), S("reduce", dim=1)],
        [S("reduce", dim=0), S("expand", dim=0, size="K")],
        ["C", "H", "W"],
        ["K", "H", "W"],
    ),
]
PAIRS += [(canonical.view_above_reduce, pair, twin) for pair, twin, _, _ in VIEW_PAIRS]
# an expand above a step that does not read the copies' axis, the twin expanding after it, and the shapes
EXPAND_PAIRS = [
    (
        [S("expand", dim=0, size="K"), S("shift", dim=2, amount=1)],
        [S("shift", dim=1, amount=1), S("expand", dim=0, size="K")],
        ["C", "H", "W"],
        ["K", "C", "H", "W"],
    ),
    (
        [S("expand", dim=1, size="K"), S("share", dims=[0], out="C")],
        [S("share", dims=[0], out="C"), S("expand", dim=2, size="K")],
        ["C", "H", "W"],
        ["C", "C", "K", "H", "W"],
    ),
    (
        [S("expand", dim=0, size="K"), S("split", dim=1, B="K")],
        [S("split", dim=0, B="K"), S("expand", dim=0, size="K")],
        ["C", "H", "W"],
        ["K", "C/K", "K", "H", "W"],
    ),
    (
        [S("expand", dim=2, size="K"), S("merge", dim=0)],
        [S("merge", dim=0), S("expand", dim=1, size="K")],
        ["C", "K", "H", "W"],
        ["C*K", "K", "H", "W"],
    ),
]
PAIRS += [(canonical.expand_last, pair, twin) for pair, twin, _, _ in EXPAND_PAIRS]


@pytest.mark.parametrize("rule,pair,twin", PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_rule_rejects_the_redundant_pair(rule, pair, twin):
    assert rule(*pair)
    assert canonical.violation(*pair).startswith(rule.__name__)
    if twin:
        assert canonical.chain_violation(twin, [False, False, True, True]) is None
    # every other rule leaves the pair alone: rules are independent
    assert [r.__name__ for r in canonical.PAIR_RULES if r(*pair)] == [rule.__name__]


def _run(steps_top_down, in_shape, out_shape, x):
    template = OperatorGraph(in_shape, out_shape)
    g = chain_graph(template, tuple(reversed(steps_top_down)))
    torch.manual_seed(0)
    return build_module(g, {"C": 4, "K": 2, "H": 5, "W": 5})(x)


@pytest.mark.parametrize(
    "pair,twin,in_shape,out_shape",
    [
        ([S("split", dim=0, B="K"), S("merge", dim=0)], [], ["C", "H", "W"], ["C", "H", "W"]),
        ([S("shift", dim=2, amount=1), S("shift", dim=2, amount=-1)], [], ["C", "H", "W"], ["C", "H", "W"]),
        (
            [S("shift", dim=3, amount=1), S("reduce", dim=0)],
            [S("reduce", dim=0), S("shift", dim=2, amount=1)],
            ["K", "C", "H", "W"],
            ["C", "H", "W"],
        ),
        (
            [S("reduce", dim=2), S("reduce", dim=1)],
            [S("reduce", dim=1), S("reduce", dim=1)],
            ["C", "K", "K", "H", "W"],
            ["C", "H", "W"],
        ),
        (
            [S("unfold", dim=1, K="K"), S("reduce", dim=0)],
            [S("reduce", dim=0), S("unfold", dim=0, K="K")],
            ["C", "H", "W"],
            ["K", "H", "W"],
        ),
        *VIEW_PAIRS,
        *EXPAND_PAIRS,
    ],
)
def test_redundant_pairs_compute_the_same_as_their_twin(pair, twin, in_shape, out_shape):
    sizes = {"C": 4, "K": 2, "H": 5, "W": 5}
    x = torch.randn(2, *[sizes[s] for s in in_shape])
    a = _run(pair, in_shape, out_shape, x)
    b = _run(twin, in_shape, out_shape, x) if twin else x
    assert torch.allclose(a, b, atol=1e-6)


def test_what_the_old_rules_dropped_is_kept():
    """Two rolls by one the same way are a roll by two, which no single shift makes, and a merge
    above a split that does not undo it ([C_in, s] regrouped as [s, C_in]) is a permutation of
    channels: neither pair is redundant (issue 34). The coordinate rewrite decides a merge
    above a split, with Syno's divisibility condition (test_search_coords)."""
    assert canonical.violation(S("shift", dim=2, amount=1), S("shift", dim=2, amount=1)) is None
    assert canonical.violation(S("merge", dim=0), S("split", dim=0, B="C_in")) is None


def test_expand_stays_above_a_step_reading_its_axis():
    assert canonical.expand_last(S("expand", dim=1, size="K"), S("share", dims=[0, 1], out="C")) is None
    assert canonical.expand_last(S("expand", dim=1, size="K"), S("merge", dim=0)) is None  # merges the copies in
    assert canonical.expand_last(S("expand", dim=0, size="K"), S("split", dim=0, B="K")) is None


def test_unfold_reductions_are_caught_over_the_chain():
    chw = [False, True, True]
    chain = [S("unfold", dim=1, K="K"), S("reduce", dim=2)]  # [C, K, H, W]: sums H
    assert "spatial axis of an unfold is reduced" in canonical.chain_violation(chain, chw)
    assert canonical.chain_violation([S("unfold", dim=1, K="K"), S("reduce", dim=1)], chw) is None  # sums K
    moved = [S("unfold", dim=2, K="K"), S("reduce", dim=1), S("reduce", dim=2)]  # sums K, then W (now index 2)
    assert "spatial axis of an unfold is reduced" in canonical.chain_violation(moved, chw)
    channel = [S("unfold", dim=1, K="K"), S("reduce", dim=0)]  # sums C below the unfold: C first
    assert "canonical order reduces first" in canonical.chain_violation(channel, chw)
    assert canonical.chain_violation([S("reduce", dim=0), S("unfold", dim=0, K="K")], chw) is None


@pytest.mark.parametrize(
    "frontier,expected",
    [
        (["C_in", "H", "W"], 0),  # already the input
        (["C_out", "H", "W"], 2),  # a share removes C_out, a reduce adds C_in
        (["C_out", "C_in", "K", "K", "H", "W"], 3),  # share, then two unfolds (conv2d's tail)
        (["C_in", "K", "K", "H", "W"], 2),  # two unfolds
        (["C_in/K", "K", "H", "W"], 1),  # one split: equal sizes, 2 + 1 - 2
        (["C_in/K^2", "K", "K", "H", "W"], 2),  # two splits: 3 + 1 - 2
        (["C_in", "K", "H", "W", "K"], 2),  # permutation of repeated axes does not matter
        (["C_in", "C_in", "H", "W"], 1),  # one expand drops the second C_in
    ],
)
def test_shape_distance_matches_hand_values(frontier, expected):
    spatial = 3 if frontier[-1] == "K" else 2
    assert shape_distance(_t(*frontier, spatial=spatial), _t("C_in", "H", "W"), {}) == expected


def test_a_growing_chain_checks_that_a_reduce_right_below_an_unfold_sums_its_window():
    """What unfold_reductions rejects in a whole chain, refused a step at a time (bottom-up, with
    the unfold's input): the unfold of W on [C, K, H, W] puts its window at 2, before H."""
    before = _t("C", "K", "H", "W")
    unfold = S("unfold", dim=3, K="K")
    assert canonical.unfold_window_summed(unfold, S("reduce", dim=2), before) is None
    assert canonical.unfold_window_summed(unfold, S("reduce", dim=1), before).startswith("unfold_reductions")
    assert canonical.unfold_window_summed(unfold, None, before) is None
    spatial = [False, False, True, True]
    for lower, verdict in ((S("reduce", dim=2), None), (S("reduce", dim=1), "unfold_reductions")):
        whole = canonical.chain_violation([unfold, lower], spatial)
        assert (whole is None) if verdict is None else whole.startswith(verdict)
