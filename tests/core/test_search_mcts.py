"""Syno's MCTS: what counts as a visit, a reward scale that never moves, equal states
merged, and a planted best operator found sooner than by random sampling."""

import math
from collections import Counter
from statistics import mean

import pytest

from core.ir.serialize import load_operator, read_document
from core.search.base import Budget
from core.search.chain import Step, chain_steps
from core.search.driver import make_strategy
from core.search.mcts import Node, SynoMCTS
from core.search.reward import RewardScale
from core.search.settings import SearchConfig
from core.search.syno import SynoRandom
from tests.support import EXAMPLES

S = Step.of


@pytest.fixture(scope="module")
def conv():
    return load_operator(EXAMPLES / "conv2d.json")


def test_rollouts_that_propose_nothing_are_no_visits(conv):
    """Over budget everywhere: every rollout is a dead end, and no node gains a visit or a value."""
    s = SynoMCTS(conv, Budget(flops=1e-6, max_primitives=5), seed=0, rollouts_per_ask=50)
    assert s.ask(1) == []
    assert s.stats["dead_ends"] == 50 and s.stats["over_budget"] > 0
    nodes = list(s.table.values())
    assert all(n.visits == 0 and n.value == 0.0 for n in nodes)
    assert s.root.dead_ends == 50


def test_an_operator_drawn_again_earns_nothing(conv):
    """A rollout that re-draws an operator already scored is a dead end: its old reward is not
    backed up again, so old operators do not pile visits onto their subtree (in a 60-minute loop
    that stopped proposing after 119 operators, one subtree held 671 visits)."""
    s = SynoMCTS(conv, Budget(max_primitives=5), seed=0, rollouts_per_ask=5)
    drawn = []
    real = s.space.rollout
    s.space.rollout = lambda p, rng: drawn.append(real(p, rng)) or drawn[-1]
    [good] = s.ask(1)
    s.tell(good.key, 1.0)
    s.space.rollout = lambda p, rng: drawn[0]  # every rollout now finds the same operator
    assert s.ask(1) == []
    assert s.root.visits == 1 and s.root.value == 1.0 and s.root.dead_ends == 5


def test_dead_ends_dilute_the_mean_of_the_subtree_they_come_from(conv):
    """A subtree that once earned well but now only dead-ends (it ran out of new operators) gives
    way to a sibling that earns less but still proposes: a 30-minute loop stopped proposing when
    MCTS narrowed onto one whose rollouts had dead-ended 2,733 times against 23 rewards."""
    s = SynoMCTS(conv, Budget(max_primitives=5), seed=0)
    parent = Node(s.root.state, visits=220, value=26.0, dead_ends=2000)
    spent = Node(s.root.state, visits=20, value=6.0, dead_ends=2000)  # 0.3 a reward, 1 in 100 tries
    fresh = Node(s.root.state, visits=200, value=20.0)  # 0.1 a reward, every try
    assert spent.mean(0.5) < fresh.mean(0.5) < 0.3
    assert s._best(parent, [spent, fresh]) is fresh and s._best(parent, [fresh, spent]) is fresh
    assert Node(s.root.state, dead_ends=5).mean(0.5) == 0.5  # no reward yet: the default


def test_visits_count_rewards_that_came_back(conv):
    s = SynoMCTS(conv, Budget(max_primitives=5), seed=0)
    found = s.ask(3)
    assert s.root.pending == 3 and s.root.visits == 0
    s.tell(found[0].key, 0.75)
    assert s.root.pending == 2 and s.root.visits == 1 and s.root.value == 0.75
    s.tell(found[0].key, 0.1)  # told twice: the second is ignored
    assert s.root.visits == 1


def test_reward_scale_is_fixed():
    bounded = RewardScale("bounded")
    assert [bounded(x) for x in (0.3, 1.2, -0.1, math.nan)] == [0.3, 1.0, 0.0, 0.0]
    fisher = RewardScale("unbounded")
    first = [fisher(x) for x in (10.0, 100.0, 1.0)]
    assert first[0] == 0.5 and first[1] == pytest.approx(100 / 110) and first[2] == pytest.approx(1 / 11)
    fisher(1e6)  # an outlier changes nothing that came before
    assert [fisher(x) for x in (10.0, 100.0, 1.0)] == first
    assert fisher(0.0) == 0.0 and fisher(math.inf) == 0.0
    with pytest.raises(ValueError, match="bounded, unbounded"):
        RewardScale("minmax")


def test_equal_states_by_different_paths_are_one_node(conv):
    s = SynoMCTS(conv, Budget(max_primitives=5), seed=0, use_canonical=False)
    space = s.space

    def walk(*steps):  # reduces sum C_in
        p = space.root
        for step in steps:
            actions = space.synth.actions(p.frontier, p.steps)
            (action,) = [
                a for a in actions if a.step == step and (step.op != "reduce" or "C_in" in map(str, a.frontier.sizes))
            ]
            p = space.child(p, action)
        return p

    # a roll of W commutes with summing a channel axis: two orders, one state
    a = walk(S("shift", dim=2, amount=1), S("reduce", dim=0))
    b = walk(S("reduce", dim=0), S("shift", dim=3, amount=1))
    assert a.steps != b.steps and space.key(a) == space.key(b)
    assert space.key(walk(S("reduce", dim=0))) != space.key(walk(S("reduce", dim=1)))
    for _ in range(60):
        for c in s.ask(1):
            s.tell(c.key, 0.5)
    assert s.stats["transpositions"] > 0
    parents = Counter(id(child) for node in s.table.values() for child in node.children)
    assert max(parents.values()) > 1  # some state is reached from two parents and shared


# a 1-D window over W with a roll, found in the middle of random sampling's order (bottom-up steps)
PLANTED = (
    S("reduce", dim=1),
    S("unfold", dim=1, K="s"),
    S("shift", dim=1, amount=1),
    S("reduce", dim=1),
    S("share", dims=(0,), out="C_out"),
)


def _proposals_until_planted(strategy, limit=400) -> int:
    planted = strategy.space.form(PLANTED)
    wanted = Counter(PLANTED)
    for n in range(1, limit + 1):
        batch = strategy.ask(1)
        if not batch:  # the space is exhausted without it
            return limit
        (c,) = batch
        steps = chain_steps(c.graph)
        if strategy.space.form(steps) == planted:
            return n
        strategy.tell(c.key, 0.8 * sum((Counter(steps) & wanted).values()) / len(PLANTED))
    return limit


def test_mcts_finds_a_planted_best_operator_sooner_than_random_sampling(conv):
    """Reward 1.0 for the planted operator, 0.8 x the share of its steps for others; a space of
    448 distinct functions of at most 5 primitives before the FLOPs cap (test_search_lossless);
    proposals counted over six seeds."""
    budget = Budget(max_primitives=5)
    mcts = [_proposals_until_planted(SynoMCTS(conv, budget, seed=seed)) for seed in range(6)]
    rand = [_proposals_until_planted(SynoRandom(conv, budget, seed=seed)) for seed in range(6)]
    assert mean(mcts) < 0.75 * mean(rand), (mcts, rand)


@pytest.mark.parametrize("evaluate,kind", [("fisher", "unbounded"), ("train", "bounded"), ("none", "bounded")])
def test_the_driver_gives_mcts_the_scale_of_its_scores(evaluate, kind):
    """The strategies' table says MCTS takes the scale (core.search.strategies); the search says which."""
    config = SearchConfig(template=read_document(EXAMPLES / "conv2d.json"), strategy="mcts", evaluate=evaluate)
    assert make_strategy(config, scores="unbounded" if evaluate == "fisher" else "bounded").reward.kind == kind
