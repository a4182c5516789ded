"""Every example's shapes, MACs, FLOPs and parameters against hand-derived formulas."""

import pytest

from core.analysis.summary import summarize
from core.ir.serialize import load_operator
from core.ir.symbolic import parse_size
from tests.support import EXAMPLES

B = {"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3, "G": 4, "g": 32, "s": 2}

# name -> (output shape, MACs, FLOPs, params) as symbolic expressions, derived by hand
EXPECTED = {
    "conv2d": ("[C_out, H, W]", ["C_out*C_in*K^2*H*W"], ["2*C_out*C_in*K^2*H*W"], ["C_out*C_in*K^2"]),
    "depthwise_separable": (
        "[C_out, H, W]",
        ["C_in*K^2*H*W", "C_out*C_in*H*W"],
        ["2*C_in*K^2*H*W", "2*C_out*C_in*H*W"],
        ["C_in*K^2", "C_out*C_in"],
    ),
    "grouped_conv": ("[C_out, H, W]", ["C_out*C_in*K^2*H*W/G"], ["2*C_out*C_in*K^2*H*W/G"], ["C_out*C_in*K^2/G"]),
    # kernel fc (G*K^2 outputs from C_in) + mul + the two reduces over K, one sum in the kernel
    "involution": (
        "[C_in, H, W]",
        ["G*K^2*C_in*H*W"],
        ["2*G*K^2*C_in*H*W", "C_in*K^2*H*W", "C_in*K^2*H*W"],
        ["G*K^2*C_in"],
    ),
    # half the channels from a KxK conv, half from a 1x1 conv, joined by concat (no FLOPs of its own)
    "mixed_conv": (
        "[C_out, H, W]",
        ["C_out*C_in*K^2*H*W/2", "C_out*C_in*H*W/2"],
        ["C_out*C_in*K^2*H*W", "C_out*C_in*H*W"],
        ["C_out*C_in*K^2/2", "C_out*C_in/2"],
    ),
    "shift_conv": ("[C_out, H, W]", ["C_out*C_in*H*W"], ["2*C_out*C_in*H*W", "C_in*H*W"], ["C_out*C_in"]),
    # grouped Kx1 fc, channel mean (C_in*H*W), sigmoid (H*W), gate mul (C_out*H*W), depthwise 1xK fc
    "gated_separable": (
        "[C_out, H, W]",
        ["C_out*C_in*K*H*W/G", "C_out*K*H*W"],
        ["2*C_out*C_in*K*H*W/G", "C_in*H*W", "H*W", "C_out*H*W", "2*C_out*K*H*W"],
        ["C_out*C_in*K/G", "C_out*K"],
    ),
    # Syno's two-weight operators: a grouped conv along W into C_out/(g*s) channels, then one along H
    "syno_operator1": (
        "[C_out, H, W]",
        ["C_out*C_in*K*H*W/g/s", "C_out^2*K^2*H*W/s"],
        ["2*C_out*C_in*K*H*W/g/s", "2*C_out^2*K^2*H*W/s"],
        ["C_out*C_in*K/g/s", "C_out^2*K^2/s"],
    ),
    "syno_operator2": (
        "[C_out, H, W]",
        ["C_out*C_in*K*H*W/g/s", "C_out^2*K*H*W/s"],
        ["2*C_out*C_in*K*H*W/g/s", "2*C_out^2*K*H*W/s"],
        ["C_out*C_in*K/g/s", "C_out^2*K/s"],
    ),
}


def _value(terms):
    return sum(parse_size(t).to_int(B) for t in terms)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_matches_hand_formulas(name):
    graph = load_operator(EXAMPLES / f"{name}.json")
    s = summarize(graph, B)
    assert s.ok, s.messages()
    out, macs, flops, params = EXPECTED[name]
    assert str(s.shapes.output) == out
    assert s.numeric_cost["macs"] == _value(macs)
    assert s.numeric_cost["flops"] == _value(flops)
    assert s.numeric_cost["params"] == _value(params)
    assert s.cost.total("macs").evaluate(B) == _value(macs)


def test_conv2d_reports_macs_and_two_flops_per_mac():
    s = summarize(load_operator(EXAMPLES / "conv2d.json"), {"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3})
    assert s.numeric_cost["macs"] == 64 * 64 * 3 * 3 * 56 * 56 == 115_605_504
    assert s.numeric_cost["flops"] == 2 * 115_605_504
    assert s.numeric_cost["params"] == 64 * 64 * 9
    assert str(s.cost.total("macs")) == "C_in*C_out*H*K^2*W"


def test_every_example_file_is_documented():
    page = (EXAMPLES.parents[1] / "docs" / "operators.md").read_text()
    for path in EXAMPLES.glob("*.json"):
        assert f"`{path.name}`" in page
        assert load_operator(path).description
