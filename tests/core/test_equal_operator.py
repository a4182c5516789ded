"""The equal operator (tests/core/data/rearranged_conv.json): a standard convolution through
another arrangement of primitives, the fixture that checks a verdict or an early stop can tell
an operator equal to the original from a worse one. It must be the same function as conv2d.json
with the same parameters and FLOPs, or those checks would measure something else."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from core.analysis.summary import summarize
from core.codegen import build_module, weight_names
from core.ir.serialize import load_operator
from tests.support import EXAMPLES

EQUAL_OPERATOR = Path(__file__).with_name("data") / "rearranged_conv.json"


def test_equal_operator_has_conv2d_cost():
    ours, theirs = (summarize(load_operator(p)) for p in (EQUAL_OPERATOR, EXAMPLES / "conv2d.json"))
    assert not ours.shapes.diagnostics
    assert ours.numeric_cost["params"] == theirs.numeric_cost["params"]
    assert ours.numeric_cost["flops"] == theirs.numeric_cost["flops"]
    # another arrangement, not a copy: the windows unfold in the other order
    assert list(ours.numeric_shapes) != list(theirs.numeric_shapes)


@pytest.mark.parametrize("k", [3, 5])
def test_equal_operator_computes_conv2d(k):
    """With conv2d's weight, its last two axes swapped ([C_out, C_in, K_w, K_h]), the output is
    torch's convolution."""
    graph = load_operator(EQUAL_OPERATOR)
    torch.manual_seed(0)
    weight = torch.randn(6, 4, k, k)
    module = build_module(graph, {"C_in": 4, "C_out": 6, "H": 9, "W": 7, "K": k})
    x = torch.randn(2, 4, 9, 7)
    with torch.no_grad():
        module.get_parameter(weight_names(graph)["share"]).copy_(weight.transpose(2, 3))
        torch.testing.assert_close(module(x), F.conv2d(x, weight, padding=k // 2), atol=1e-5, rtol=1e-5)
