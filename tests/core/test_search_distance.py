"""Shape distance never over-estimates: checked against a breadth-first oracle that runs the
Synthesizer's own actions, and on operators found with pruning off."""

from functools import lru_cache

import pytest

from core.ir.serialize import load_operator
from core.search.base import Budget
from core.search.chain import chain_steps
from core.search.distance import shape_distance
from core.search.mcts import SynoMCTS
from core.search.syno import SynoRandom
from tests.support import EXAMPLES

DEPTH, CAP = 1, 3  # frontiers one step from the output, true distances up to 3 steps
CHAINS = ("conv2d", "syno_operator1", "syno_operator2")


@pytest.fixture(scope="module")
def space():
    return SynoMCTS(load_operator(EXAMPLES / "conv2d.json"), Budget(max_primitives=7), seed=0).space


def test_distance_is_a_lower_bound_of_the_breadth_first_distance(space):
    synth = space.synth

    def nexts(f):
        return {a.frontier for a in synth.actions(f, ())}  # no per-chain limits: the oracle is generous

    @lru_cache(None)
    def within(f, k):
        """Whether k steps reach the input (a step adds or removes at most one axis)."""
        return synth.done(f) or (
            k > 0 and abs(len(f) - len(synth.target)) <= k and any(within(g, k - 1) for g in nexts(f))
        )

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
    assert checked >= 20


def test_operators_found_without_pruning_are_not_pruned_by_it():
    """Every prefix of every chain found with shape distance off is within the distance's bound.
    Without it few random completions reach the input (Syno: none of 500M trials; here 2 in
    1,500 tries of at most 4 primitives), so the chains are short ones and the bundled Syno chains."""
    conv = load_operator(EXAMPLES / "conv2d.json")
    s = SynoRandom(conv, Budget(max_primitives=4), seed=0, use_distance=False, attempts=750)
    found = [c.graph for c in s.ask(2)]
    assert len(found) == 2
    for graph in [*found, *(load_operator(EXAMPLES / f"{name}.json") for name in CHAINS)]:
        steps = chain_steps(graph)
        shape = s.space.synth.target
        for k in range(len(steps), 0, -1):  # top-down: the frontier before step k-1 was added
            step = steps[k - 1]
            assert shape_distance(shape, s.space.synth.target, s.space.synth.kinds) <= len(steps) - k
            shape = step.prim().infer([shape], s.space.synth.kinds)
