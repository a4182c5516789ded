"""Canonicalization loses no function (issue 34): every function a chain of Syno's space
computes without the canonical rules, some chain that passes them computes too. Every chain of
at most 4 primitives is enumerated, with the rules and without (bench_search does 6).

A function here is an operator's set of maps, one per choice of its weights. "The same
function" is decided symbolically and checked numerically:

- Symbolically, by the canonical form of the chain's coordinate expressions (Algebra.key).
  Each step from expressions to form either rewrites index arithmetic into equal arithmetic
  or changes the weights without changing the set of maps: relabelling a weight's entries one
  to one, summing a weight over an axis only it reads (any weight of the other axes is such a
  sum), or absorbing a weight whose coordinates another has (their product is any weight of
  the larger). So chains with equal forms compute the same function, and the function of a
  chain found without the rules is reachable with them when some canonical chain has its form.
- Numerically, on random inputs at small sizes: the expressions compute what the generated
  PyTorch module computes (random weights); and where the canonical twin has one weight (its
  output is linear in it), the output of each rule-less chain of the form, at random weights,
  is reached exactly by least squares over the twin's weight, with more equations than
  entries: a random map of the one family lies in the other. A tied weight such as
  W[c_out, c_in/s] against W[c_out, c_in] leaves a residual (the control below), so this sees
  weight sharing, which comparing outputs for one set of weights cannot. Twins with several
  weights: outputs with every weight 1 agree up to a scale (every step of the form maps
  weights of ones to weights of ones, up to the size of a summed axis).

Exact figures are pinned: a change to the space or the rules changes them, and says so."""

from __future__ import annotations

import pytest
import torch

from core.codegen.to_torch import build_module
from core.ir.serialize import load_operator
from core.search.base import Budget
from core.search.chain import Step, chain_graph
from tests.core.search_enumeration import (
    canonical_rate,
    enumerate_chains,
    evaluate,
    lost_functions,
    random_inputs,
    space,
    twin_fit,
)
from tests.support import EXAMPLES

DEPTH = 4
#: every axis of the space longer than 1 and no two coefficients equal (C_in/(g*s) = 1 is the exception)
SMALL = {"C_in": 8, "C_out": 16, "H": 4, "W": 5, "K": 3, "s": 2, "g": 4}
S = Step.of


@pytest.fixture(scope="module")
def enumerated():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # thousands of tiny tensors: threads only cost here
    template = load_operator(EXAMPLES / "conv2d.json")
    raw, canonical = space(template, DEPTH, False), space(template, DEPTH, True)
    yield template, raw, enumerate_chains(raw), canonical, enumerate_chains(canonical)
    torch.set_num_threads(threads)


def test_every_function_without_the_rules_is_reachable_with_them(enumerated):
    _, _, raw, _, canonical = enumerated
    assert set(raw) == set(canonical)  # every form without the rules has a canonical chain
    assert (sum(map(len, raw.values())), sum(map(len, canonical.values())), len(raw)) == (974, 323, 88)


def test_the_expressions_compute_what_the_module_computes(enumerated):
    template, raw, forms, _, _ = enumerated
    x = random_inputs(2, SMALL)
    chains = [c for cs in forms.values() for c in cs][::10]  # 98 of them
    torch.manual_seed(0)
    for steps in chains:
        module = build_module(chain_graph(template, steps), SMALL).double()
        with torch.no_grad():
            want = module(x)
        got = evaluate(raw, steps, x, [p.detach() for p in module.parameters()], SMALL)
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9, msg=lambda m, s=steps: f"{s}: {m}")


def test_a_canonical_twin_computes_every_chain_of_its_form(enumerated):
    _, raw, forms, canonical, twins = enumerated
    missing, wrong, fitted, ones = lost_functions(raw, forms, canonical, twins, SMALL)
    assert not missing and not wrong, wrong[:3]
    assert (fitted, ones) == (931, 43)  # most twins have one weight: the exact check


CONV1X1 = (S("reduce", dim=1), S("share", dims=(0,), out="C_out"))  # bottom-up


@pytest.mark.parametrize(
    "other,twin",
    [
        # a 1x1 convolution against one whose weight is shared by pairs of input channels
        (
            CONV1X1,
            (S("reduce", dim=1), S("merge", dim=1), S("share", dims=(0,), out="C_out"), S("split", dim=0, B="s")),
        ),
        # two rolls by one are a roll by two, not one (what the old rule dropped)
        ((S("shift", dim=1, amount=1), S("shift", dim=1, amount=1), *CONV1X1), (S("shift", dim=1, amount=1), *CONV1X1)),
    ],
)
def test_the_fit_tells_different_functions_apart(enumerated, other, twin):
    _, raw, _, canonical, _ = enumerated
    assert raw.form(other) != canonical.form(twin)
    assert twin_fit(canonical, twin, raw, [other], SMALL) > 0.1


def test_the_canonical_rate_is_pinned(enumerated):
    """Syno's measure, framed as its 86 canonical of 6,452 samples: of 200 random chains of at
    most 7 primitives drawn with canonicalization off (seed 0, conv2d, FLOPs budget 1.0x), how
    many pass every rule; bench_search prints it for 2,000."""
    template = enumerated[0]
    assert canonical_rate(template, Budget(flops=1.0, max_primitives=7), 200) == (200, 3, 102)
