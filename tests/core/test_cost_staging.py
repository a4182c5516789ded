"""The cost model counts the kernel TVM builds: a reduction staged by rfactor is counted as
its stages (core.analysis.staging decides for both), so search budgets see the work the
kernel does; among the ways to stage a reduction the cheapest is chosen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.analysis.summary import summarize
from core.codegen.to_tvm import lower
from core.ir.serialize import graph_from_document, load_operator
from core.search.base import Budget, Limits
from core.search.canvas_sampler import CanvasSampler
from core.search.mcts import SynoMCTS
from tests.core.tvm_checks import kernel_flops
from tests.support import EXAMPLES, reduction_orders

SIZES = {"C_in": 8, "C_out": 8, "H": 6, "W": 7, "K": 3, "G": 2, "g": 2, "s": 2}


def _sampled() -> list:
    conv = load_operator(EXAMPLES / "conv2d.json")
    canvas = CanvasSampler(conv, Budget(flops=2.0, max_primitives=6), seed=5).ask(20)
    mcts = SynoMCTS(conv, Budget(flops=2.0, max_primitives=7), seed=5).ask(20)
    return [c.graph for c in canvas + mcts]


def _same_work(graph, bindings) -> None:
    cost = summarize(graph, bindings).numeric_cost
    assert cost is not None
    assert cost["flops"] == kernel_flops(lower(graph, bindings))


@pytest.mark.tvm
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_every_example_costs_what_its_kernel_does(path):
    graph = load_operator(path)
    _same_work(graph, {k: v for k, v in SIZES.items() if k in graph.mentioned_variables()})


@pytest.mark.tvm
def test_sampled_operators_cost_what_their_kernels_do():
    graphs = _sampled()
    assert len(graphs) == 40
    for graph in graphs:
        _same_work(graph, graph.bindings)


@pytest.mark.tvm
def test_a_contraction_after_a_gathered_one_costs_what_its_kernel_does():
    """A window (unfold of s) read by two contractions in a row, neither summing it: the kernel
    computes the first on the unwindowed input and reads the second's input through the window
    afterwards (a gather of the first stage), so the second contracts s times fewer terms. The
    count took the first's output as a tensor of its own and counted the second with the window,
    4/3 of the kernel's work (MCTS sampled it, seed 5)."""
    graph = load_operator(Path(__file__).parent / "data" / "two_contractions_through_a_window.json")
    _same_work(graph, graph.bindings)


def test_an_operator_the_unstaged_count_put_over_budget_is_accepted():
    # unstaged its one contraction is C_out*C_in*K*H*W terms, a third of conv2d's (K = 3);
    # staged, W is summed on the input first and the weight runs over K alone: ~1/(K*W) of it
    limits = Limits(load_operator(EXAMPLES / "conv2d.json"), Budget(flops=0.2))
    graph = reduction_orders(bindings={})
    unstaged = summarize(graph, limits.bindings).cost.total("flops").evaluate(limits.bindings)
    flops, params = limits.measure(graph)
    assert limits.max_flops is not None and unstaged > limits.max_flops
    assert limits.within(flops, params) and flops * 10 < limits.max_flops


def test_a_reduce_chain_that_runs_into_an_error_is_reported_not_raised():
    """Found by fuzzing: a chain whose last reduce has no shape made the stage planner raise
    KeyError instead of the summary naming the node."""
    document = json.loads((EXAMPLES / "conv2d.json").read_text())
    next(n for n in document["nodes"] if n["id"] == "sum_kw")["params"]["dim"] = 9
    graph = graph_from_document(document)
    summary = summarize(graph, graph.bindings)
    assert not summary.ok and "sum_kw" in str(summary.shapes.errors)
    assert summary.numeric_cost is not None and summary.numeric_cost["nodes"]["share"]["macs"] > 0
