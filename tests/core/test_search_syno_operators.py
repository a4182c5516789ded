"""Syno's Operator 1 and 2 are in the search's space (issue 34): replayed from the empty graph
(the output) through the same actions MCTS and random sampling take, with shape distance
pruning at a budget of exactly their primitives, they are proposed and compute what the
example files compute. They need reductions over compound sizes (C_in/g, C_out/(g*s)) and
the coefficient g; in Tessera's form (see the files' notes) both are chains."""

from __future__ import annotations

import pytest
import torch

from core.codegen.to_torch import build_module
from core.ir.serialize import load_operator
from core.ir.symbolic import parse_size
from core.search.base import Budget
from core.search.chain import Step, chain_graph, chain_steps
from core.search.syno import Partial, SynoRandom, SynoSpace
from tests.support import EXAMPLES

OPERATORS = ("syno_operator1", "syno_operator2")
SIZES = ("B", "K", "S", "out", "size")  # parameters that hold a size expression
SMALL = {"C_in": 8, "C_out": 16, "H": 5, "W": 6, "K": 3, "g": 4, "s": 2}  # C_out/(g*s) = 2


def _same(a: Step, b: Step) -> bool:
    """Equal steps, size parameters compared as sizes (C_out/g/s is C_out/(g*s))."""
    norm = lambda s: {k: parse_size(v) if k in SIZES else v for k, v in s.params}  # noqa: E731
    return a.op == b.op and norm(a) == norm(b)


def replay(space: SynoSpace, steps: tuple[Step, ...]) -> Partial:
    """The chain (bottom-up steps) built one action at a time, each one the space offers."""
    shapes = [space.synth.target]
    for step in reversed(steps):
        shapes.append(step.prim().infer([shapes[-1]], space.synth.kinds))
    p = space.root
    for step, before in zip(steps, reversed(shapes[:-1])):
        (action,) = [a for a in space.actions(p) if a.frontier == before and _same(a.step, step)]
        p = space.child(p, action)
        assert p is not None, f"{step} fires a canonicalization rewrite"
    return p


@pytest.mark.parametrize("name", OPERATORS)
def test_the_synthesizer_reaches_the_operator_from_the_empty_graph(name):
    template = load_operator(EXAMPLES / "conv2d.json")
    example = load_operator(EXAMPLES / f"{name}.json")
    steps = chain_steps(example)
    strategy = SynoRandom(template, Budget(max_primitives=len(steps)), seed=0)
    p = replay(strategy.space, steps)
    assert strategy.space.complete(p) and strategy.space.violation(p) is None
    candidate = strategy.space.propose(p)
    assert candidate is not None and candidate.flops < 0.6 * strategy.limits.reference_flops

    torch.manual_seed(0)
    want_module = build_module(example, SMALL)
    got_module = build_module(chain_graph(template, p.steps), SMALL)
    weights = [w.shape for w in want_module.parameters()]
    assert [w.shape for w in got_module.parameters()] == weights and len(weights) == 2
    with torch.no_grad():
        for got, want in zip(got_module.parameters(), want_module.parameters()):
            got.copy_(want)
        x = torch.randn(2, SMALL["C_in"], SMALL["H"], SMALL["W"])
        torch.testing.assert_close(got_module(x), want_module(x))
