"""Operators whose TVM lowering once disagreed with their torch module, found by running
searches; each is the searched candidate cut down to the fewest primitives that still
disagreed. Plus a differential check of a fixed sample of Syno MCTS candidates, so the
next lowering bug of this kind shows up here rather than as a NumericalMismatch in a search."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.ir.serialize import graph_from_document
from core.search.base import Budget
from core.search.mcts import SynoMCTS
from tests.core.tvm_checks import assert_same, blocks, run_both
from tests.support import EXAMPLES, chain

pytestmark = pytest.mark.tvm

SIZES = {"C": 4, "H": 5, "W": 6, "s": 2}

# Two rolls composed lazily were floormod(floormod(h + a, H) + b, H), which TVM 0.27's iter-map
# simplifier (FlattenBuffer, on every build) rewrote with one of the offsets dropped: a shift lost.
ROLLS = {
    # MCTS over conv2d (seed 0) proposed share -> reduce -> shift(H, -1) -> split -> shift(H, +1)
    # -> expand -> merge -> reduce; the two shifts alone still disagreed (TVM rolled by one).
    "roll_of_a_roll": (
        ["C", "H", "W"],
        [("a", "shift", {"dim": 1, "amount": -1}, ["input"]), ("b", "shift", {"dim": 1, "amount": 1}, ["a"])],
    ),
    "rolls_add_up": (
        ["C", "H", "W"],
        [("a", "shift", {"dim": 1, "amount": 1}, ["input"]), ("b", "shift", {"dim": 1, "amount": 2}, ["a"])],
    ),
    # W rolled, split into [W/s, s], the inner axis rolled, merged back
    "roll_of_a_split_roll": (
        ["C", "H", "W"],
        [
            ("a", "shift", {"dim": 2, "amount": 1}, ["input"]),
            ("sp", "split", {"dim": 2, "B": "s"}, ["a"]),
            ("b", "shift", {"dim": 3, "amount": 1}, ["sp"]),
            ("m", "merge", {"dim": 2}, ["b"]),
        ],
    ),
}


@pytest.mark.parametrize("name", ROLLS)
def test_composed_rolls_match_torch(name):
    out, steps = ROLLS[name]
    got, want, _ = run_both(chain(["C", "H", "W"], out, steps, bindings=SIZES))
    assert_same(got, want)


def test_searched_operator_with_two_rolls_matches_torch():
    """The MCTS candidate itself: the rolls cancel, so no roll stage is left."""
    g = chain(
        ["C", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("n0", "share", {"dims": [0], "out": "C_out"}, ["input"]),
            ("n1", "reduce", {"dim": 1}, ["n0"]),
            ("n2", "shift", {"dim": 1, "amount": -1}, ["n1"]),
            ("n3", "split", {"dim": 0, "B": "s"}, ["n2"]),
            ("n4", "shift", {"dim": 2, "amount": 1}, ["n3"]),
            ("n5", "expand", {"dim": 0, "size": "s"}, ["n4"]),
            ("n6", "merge", {"dim": 1}, ["n5"]),
            ("n7", "reduce", {"dim": 0}, ["n6"]),
        ],
        bindings={**SIZES, "C_out": 4},
    )
    got, want, script = run_both(g)
    assert_same(got, want)
    assert blocks(script) == ["n0", "n7"]


def test_a_roll_is_a_stage_of_its_root_and_its_modulo_stays_there():
    g = chain(
        ["C", "H", "W"],
        ["H", "W"],
        [
            ("a", "shift", {"dim": 1, "amount": 2}, ["input"]),
            ("sp", "split", {"dim": 0, "B": "s"}, ["a"]),
            ("m", "merge", {"dim": 0}, ["sp"]),
            ("r", "reduce", {"dim": 0}, ["m"]),
        ],
        bindings=SIZES,
    )
    got, want, script = run_both(g)
    assert_same(got, want)
    assert blocks(script) == ["roll_x", "r"]
    assert f"% {SIZES['H']}" not in script.split('T.sblock("r")')[1], "the roll's modulo stays in its stage"


def test_sampled_mcts_candidates_match_torch():
    """Twelve Syno MCTS candidates over conv2d (seed 1: the sixth once disagreed), at small sizes."""
    template = graph_from_document(json.loads((EXAMPLES / "conv2d.json").read_text()))
    search = SynoMCTS(template, Budget(), seed=1)
    candidates = [c for _ in range(12) for c in search.ask(1)]
    assert len(candidates) == 12
    small = {"C_in": 8, "C_out": 8, "H": 6, "W": 6}
    for c in candidates:
        got, want, _ = run_both(c.graph, {**c.graph.bindings, **small}, batch=1)
        assert got.shape == want.shape, c.key
        assert np.allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max()))), c.key
