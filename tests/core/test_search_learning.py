"""What makes MCTS learn in the discovery loop (issue 34): the FLOPs cap judged network-wide, the
reward for every way a candidate can end, tree statistics that follow a planted reward, and
random sampling in the same space as the baseline it must beat."""

import math

import pytest
import torch

from core.analysis.shapes import infer_shapes
from core.codegen.to_torch import build_module
from core.data.swap_convs import searched_layers
from core.ir.serialize import load_operator, read_document
from core.search.base import Budget
from core.search.chain import Step, chain_steps
from core.search.driver import make_strategy
from core.search.mcts import SynoMCTS
from core.search.reward import HINT, accuracy_reward, outcome_reward
from core.search.settings import SearchConfig
from core.search.syno import SynoRandom
from core.train.settings import EvalSettings
from tests.support import EXAMPLES

S = Step.of
PROXY = EvalSettings().spec  # the default task's network: ResNet-18, width 16, 24 px


@pytest.fixture(scope="module")
def conv():
    return load_operator(EXAMPLES / "conv2d.json")


def test_the_network_wide_cap_refuses_an_operator_that_fits_the_template_layer_but_not_the_network(conv):
    """Depthwise-separable costs (9 + C) / 9C of a convolution: 12.7% at the template's 64 channels,
    14.3% summed over the default network's layers (16 to 128 channels, most FLOPs in the
    narrow ones). A 13.5% cap lets it through on one layer and refuses it across the network."""
    separable = load_operator(EXAMPLES / "depthwise_separable.json")
    budget = Budget(flops=0.135)
    one_layer = SynoMCTS(conv, budget, seed=0)
    network = SynoMCTS(conv, budget, seed=0, layers=searched_layers(PROXY))
    assert one_layer.admit(separable) is not None
    assert network.admit(separable) is None and network.stats["over_budget"] == 1
    ratio = network.limits.measure(separable)[0] / network.limits.reference_flops
    assert 0.135 < ratio < 0.15


@pytest.mark.parametrize("strategy", ["mcts", "random"])
def test_the_loop_gives_syno_strategies_every_layer_of_its_networks(strategy):
    config = SearchConfig(template=read_document(EXAMPLES / "conv2d.json"), strategy=strategy)
    s = make_strategy(config, (PROXY,))
    assert s.limits.layers == searched_layers(PROXY)
    assert make_strategy(config).limits.layers == {}  # no network named: the template's own layer


def test_the_reward_of_each_outcome():
    trained = {"original": 0.9, "chance": 0.1}
    assert outcome_reward("trained", accuracy=0.9, **trained) == 1.0
    assert outcome_reward("within margin", accuracy=0.95, **trained) == 1.0  # above the original: capped
    assert outcome_reward("outside margin", accuracy=0.5, **trained) == pytest.approx(0.25)  # halfway, squared
    assert outcome_reward("stopped early", accuracy=0.3, **trained) == pytest.approx(0.0625)
    assert outcome_reward("did not learn", accuracy=0.08, **trained) == 0.0  # below chance
    # screened out: a hint in proportion to how near the screen's threshold it came
    assert outcome_reward("screened out", fisher_ratio=0.5, threshold=1.0) == pytest.approx(HINT / 2)
    assert outcome_reward("screened out", fisher_ratio=0.5, threshold=0.25) == HINT
    assert outcome_reward("screened out", fisher_ratio=math.nan) == 0.0
    assert outcome_reward("too slow", fisher_ratio=3.0) == HINT / 2  # passed the screen, trained too slowly
    assert outcome_reward("diverged", fisher_ratio=3.0) == outcome_reward("failed") == 0.0
    # a hint is what a candidate trained a seventh of the way from chance to the original earns
    assert accuracy_reward(0.1 + 0.8 / 7, 0.9, 0.1) == pytest.approx(HINT, rel=0.03)
    # the latency term: times 1 - w x the FLOPs ratio
    assert outcome_reward("trained", accuracy=0.9, flops_ratio=0.4, flops_penalty=0.5, **trained) == 0.8
    assert outcome_reward("trained", accuracy=0.9, flops_ratio=3.0, flops_penalty=0.5, **trained) == 0.0
    with pytest.raises(ValueError, match="needs its accuracy"):
        outcome_reward("trained", original=0.9)
    with pytest.raises(ValueError, match="no reward for outcome 'tuned'"):
        outcome_reward("tuned", accuracy=0.9, original=0.9)


PLANTED_ARM = S("shift", dim=2, amount=1)  # a roll of W as the first step from the output


def _share_of_planted_arm(conv, planted: float, other: float, proposals: int = 120) -> tuple[float, dict]:
    s = SynoMCTS(conv, Budget(max_primitives=5), seed=0)
    for _ in range(proposals):
        for c in s.ask(1):
            s.tell(c.key, planted if chain_steps(c.graph)[0] == PLANTED_ARM else other)
    arms = {child.state.steps[0]: child for child in s.root.children}
    return arms[PLANTED_ARM].visits / s.root.visits, arms


def test_mcts_tree_statistics_move_toward_the_better_arm(conv):
    """Operators whose first step from the output is a roll of W earn 0.9, every other 0.1: that
    root child gains the most visits and the highest mean of all 16, and several times the share
    it gets when every operator earns the same."""
    share, arms = _share_of_planted_arm(conv, 0.9, 0.1)
    flat, _ = _share_of_planted_arm(conv, 0.1, 0.1)
    planted = arms[PLANTED_ARM]
    assert planted.visits == max(a.visits for a in arms.values())
    assert planted.mean(0) == max(a.mean(0) for a in arms.values())
    assert share > 3 * flat, (share, flat)


def test_random_sampling_proposes_valid_distinct_operators_in_syno_space(conv):
    config = SearchConfig(template=read_document(EXAMPLES / "conv2d.json"), strategy="random", seed=2, max_primitives=6)
    s = make_strategy(config, (PROXY,))
    assert isinstance(s, SynoRandom)
    found = s.ask(20)
    assert len(found) == 20 and len({c.key for c in found}) == 20
    assert len({s.space.form(chain_steps(c.graph)) for c in found}) == 20  # distinct canonical forms too
    for c in found:
        assert c.origin == "search:random" and infer_shapes(c.graph).solved
        assert c.flops <= s.limits.max_flops
    for c in found[::10]:  # built and run at one of the network's layers
        module = build_module(c.graph, {**c.graph.bindings, "C_in": 32, "C_out": 32, "H": 12, "W": 12, "K": 3})
        assert module(torch.randn(1, 32, 12, 12)).shape == (1, 32, 12, 12)
    s.tell(found[0].key, 1.0)  # told a score, it learns nothing: the next draws are the same as without
    again = make_strategy(config, (PROXY,))
    again.ask(20)
    assert [c.key for c in s.ask(5)] == [c.key for c in again.ask(5)]


def test_the_flops_penalty_is_a_setting_of_the_run():
    """0 (the default) is the run as before the setting existed; another value is another run; a
    negative one is refused."""
    from core.search.base import SearchError
    from core.search.settings import DiscoveryConfig

    base = {"template": read_document(EXAMPLES / "conv2d.json"), "tune": False}
    plain = DiscoveryConfig.from_dict(base)
    assert DiscoveryConfig.from_dict({**base, "flops_penalty": 0.0}).key == plain.key
    assert DiscoveryConfig.from_dict({**base, "flops_penalty": 0.5}).key != plain.key
    with pytest.raises(SearchError, match="flops_penalty must be a number >= 0"):
        DiscoveryConfig.from_dict({**base, "flops_penalty": -1})
