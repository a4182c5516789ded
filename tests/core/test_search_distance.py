"""Shape distance never over-estimates: checked against a breadth-first oracle that runs the
Synthesizer's own actions, and on operators found with pruning off."""

from functools import lru_cache

import pytest

from core.ir.serialize import load_operator
from core.search.base import Budget
from core.search.chain import chain_steps
from core.search.distance import shape_distance
from core.search.mcts import SynoMCTS
from tests.support import EXAMPLES

DEPTH, CAP = 2, 3  # frontiers up to 2 steps from the output, true distances up to 3 steps


@pytest.fixture(scope="module")
def space():
    return SynoMCTS(load_operator(EXAMPLES / "conv2d.json"), Budget(max_primitives=7), seed=0).space


def test_distance_is_a_lower_bound_of_the_breadth_first_distance(space):
    synth = space.synth

    def nexts(f):
        return {a.frontier for a in synth.actions(f, ())}  # no per-chain limits: the oracle is generous

    @lru_cache(None)
    def within(f, k):
        return synth.done(f) or (k > 0 and any(within(g, k - 1) for g in nexts(f)))

    layer = seen = {space.root.frontier}
    for _ in range(DEPTH):
        layer = {g for f in layer for g in nexts(f)} - seen
        seen = seen | layer
    checked = 0
    for f in seen:
        true = next((k for k in range(CAP + 1) if within(f, k)), None)
        if true is not None:
            checked += 1
            assert shape_distance(f, synth.target, synth.kinds) <= true, f
    assert checked >= 30


def test_operators_found_without_pruning_are_not_pruned_by_it():
    """Every prefix of every chain found with shape distance off is within the distance's bound."""
    conv = load_operator(EXAMPLES / "conv2d.json")
    s = SynoMCTS(conv, Budget(max_primitives=7), seed=0, use_distance=False)
    found = s.ask(25)
    assert len(found) == 25
    for c in found:
        steps = chain_steps(c.graph)
        shape = s.space.synth.target
        for k in range(len(steps), 0, -1):  # top-down: the frontier before step k-1 was added
            step = steps[k - 1]
            assert shape_distance(shape, s.space.synth.target, s.space.synth.kinds) <= len(steps) - k
            shape = step.prim().infer([shape], s.space.synth.kinds)
