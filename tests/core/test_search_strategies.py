"""Search strategies: the table that names them, validity, budgets, de-duplication,
reproducibility, learning."""

import pytest
import torch

from core.analysis.shapes import infer_shapes
from core.codegen.to_torch import build_module
from core.ir.serialize import load_operator
from core.jobs.code_paths import resolve
from core.search.base import Budget, Deduplicator, Limits, SearchError, Strategy
from core.search.canvas_sampler import CanvasSampler
from core.search.mcts import SynoMCTS
from core.search.strategies import STRATEGIES
from tests.support import EXAMPLES

SMALL = {"C_in": 8, "C_out": 8, "H": 6, "W": 6, "K": 3, "g": 2}  # g: the search says 8, which needs 16 channels


@pytest.fixture(scope="module")
def conv():
    return load_operator(EXAMPLES / "conv2d.json")


def _check(candidates, limits, n):
    assert len(candidates) == n
    assert len({c.key for c in candidates}) == n
    for c in candidates:
        assert infer_shapes(c.graph).solved
        assert c.flops <= limits.max_flops
        assert c.origin.startswith("search:")


def test_every_strategy_in_the_table_is_a_strategy_named_by_its_key():
    """Its candidates' origin is search:<key>, the key configs and stored runs name it by."""
    for key, entry in STRATEGIES.items():
        cls = resolve(entry.target)
        assert issubclass(cls, Strategy) and cls.name == entry.key == key and entry.label


def test_the_table_is_complete_and_its_rows_carry_what_the_driver_needs():
    """Every strategy class of core/search has its row (so the CLI, the window and the driver know
    it), the row says whether the class takes the scale of its scores (the driver special-cases no
    key), and the command line offers exactly the table's keys."""
    import argparse
    import importlib
    import inspect
    import pkgutil

    import core.search
    from app.cli import build_parser

    for module in pkgutil.iter_modules(core.search.__path__):
        importlib.import_module(f"core.search.{module.name}")

    def concrete(cls):
        for sub in cls.__subclasses__():
            yield from concrete(sub)
            if not inspect.isabstract(sub) and sub.__module__.startswith("core.search."):
                yield sub

    targets = {resolve(entry.target) for entry in STRATEGIES.values()}
    assert set(concrete(Strategy)) == targets
    for entry in STRATEGIES.values():
        takes = "scores" in inspect.signature(resolve(entry.target)).parameters
        assert entry.scaled == takes, entry.key
    for command in ("search", "discover"):
        commands = next(a for a in build_parser(command)._actions if isinstance(a, argparse._SubParsersAction))
        strategy = next(a for a in commands.choices[command]._actions if a.dest == "strategy")
        assert tuple(strategy.choices) == tuple(STRATEGIES), command


def test_canvas_samples_200_valid_distinct_in_budget(conv):
    s = CanvasSampler(conv, Budget(flops=0.5, max_primitives=6), seed=3)
    found = s.ask(200)
    _check(found, s.limits, 200)
    assert all(len(c.graph.primitive_nodes()) <= 6 for c in found)
    ops = {c.graph.prim(n).op for c in found for n in c.graph.primitive_nodes()}
    assert {"fc", "unfold", "broadcast", "group"} <= ops  # types are drawn uniformly, blending included
    torch.manual_seed(0)
    for c in found[::20]:  # a subset compiles and runs with PyTorch at other sizes
        module = build_module(c.graph, {**c.graph.bindings, **SMALL})
        y = module(torch.randn(2, 8, 6, 6))
        assert y.shape == (2, 8, 6, 6)


def test_canvas_is_reproducible_with_a_seed(conv):
    a = [c.key for c in CanvasSampler(conv, Budget(flops=0.5), seed=11).ask(10)]
    b = [c.key for c in CanvasSampler(conv, Budget(flops=0.5), seed=11).ask(10)]
    c = [c.key for c in CanvasSampler(conv, Budget(flops=0.5), seed=12).ask(10)]
    assert a == b and a != c


def test_mcts_candidates_are_valid_distinct_and_capped(conv):
    s = SynoMCTS(conv, Budget(flops=0.5, max_primitives=7), seed=0)
    found = s.ask(30)
    _check(found, s.limits, 30)
    for c in found[::10]:
        module = build_module(c.graph, {**c.graph.bindings, **SMALL})
        assert module(torch.randn(1, 8, 6, 6)).shape == (1, 8, 6, 6)
    assert s.stats["pruned_canonical"] > 0 and s.stats["pruned_distance"] > 0


def _reward(candidate) -> float:
    """Synthetic, in [0, 1] like an accuracy: operators that unfold both spatial axes and
    contract over the window score high."""
    ops = [candidate.graph.prim(n) for n in candidate.graph.primitive_nodes()]
    unfolds = {p.params["dim"] for p in ops if p.op == "unfold"}
    return (len(unfolds) + 0.5 * sum(p.op == "reduce" for p in ops) - 0.2 * len(ops) + 1.4) / 4


def _mean_reward(conv, seed: int, learn: bool, n: int = 80) -> float:
    s = SynoMCTS(conv, Budget(flops=2.0, max_primitives=5), seed=seed)
    rewards = []
    for _ in range(n):
        for c in s.ask(1):
            rewards.append(_reward(c))
            if learn:
                s.tell(c.key, rewards[-1])
    assert len(rewards) == n
    return sum(rewards) / n


def test_mcts_improves_its_reward(conv):
    """The same search with scores told back finds better operators than without them."""
    learned = sum(_mean_reward(conv, seed, True, 100) for seed in (0, 1, 2)) / 3
    blind = sum(_mean_reward(conv, seed, False, 100) for seed in (0, 1, 2)) / 3
    assert learned > blind + 0.01


def test_deduplicator_sees_renamed_copies(conv):
    d = Deduplicator()
    assert d.add(conv)
    again = load_operator(EXAMPLES / "conv2d.json")
    again.name = "same thing"
    assert not d.add(again)
    assert d.add(load_operator(EXAMPLES / "grouped_conv.json"))
    assert len(d) == 2


def test_budget_limits_from_template(conv):
    limits = Limits(conv, Budget(flops=0.5, params=0.25))
    assert limits.max_flops == 0.5 * 2 * 64 * 64 * 9 * 56 * 56
    assert limits.max_params == 0.25 * 64 * 64 * 9
    unbound = load_operator(EXAMPLES / "conv2d.json")
    unbound.bindings = {}
    with pytest.raises(SearchError, match="fully bound"):
        Limits(unbound, Budget())
