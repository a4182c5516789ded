"""Diagnostics name the node, the dimension and the reason."""

import json
import time

import pytest

from core.analysis.shapes import concrete_shapes, infer_shapes
from core.analysis.summary import summarize
from core.ir.errors import BindingError
from core.ir.graph import OperatorGraph
from core.ir.primitives import make
from core.ir.serialize import graph_from_document
from tests.support import EXAMPLES, chain, relu_chain_document


def test_broadcast_that_cannot_divide_names_node_and_shapes():
    g = chain(
        ["C", "H", "W"],
        ["C", "H", "W"],
        [
            ("u1", "unfold", {"dim": 1, "K": "K"}, ["input"]),  # [C, K, H, W]
            ("g1", "group", {"dim": 0, "G": "G"}, ["input"]),  # [G, C/G, H, W]
            ("f1", "fc", {"out": "C_out"}, ["g1"]),  # [C_out, H, W]
            ("b3", "broadcast", {"fn": "add"}, ["f1", "u1"]),
        ],
    )
    report = infer_shapes(g)
    (err,) = [d for d in report.errors if d.node == "b3"]
    assert err.message.startswith("broadcast b3: LHS [C_out, H, W] does not divide RHS [C, K, H, W]")
    assert "b3" not in report.shapes and "output" not in report.shapes  # downstream has no shape
    assert [d.node for d in report.errors] == ["b3"]  # only the root cause is reported


def test_concat_adds_like_sizes_and_names_what_does_not_fit():
    def joined(a_out, b_out, dim=0):
        g = chain(
            ["C", "H", "W"],
            ["C", "H", "W"],
            [
                ("a", "fc", {"out": a_out}, ["input"]),
                ("b", "fc", {"out": b_out}, ["input"]),
                ("cat", "concat", {"dim": dim}, ["a", "b"]),
            ],
            variables={"C": "primary", "H": "primary", "W": "primary"},
        )
        return infer_shapes(g)

    assert str(joined("C/4", "3*C/4").shapes["cat"]) == "[C, H, W]"
    assert str(joined("24", "40").shapes["cat"]) == "[64, H, W]"
    (err,) = joined("C", "H").errors
    assert err.node == "cat" and err.message.startswith("concat cat: along dim 0: C + H is not one size")
    (err,) = joined("C", "C", dim=1).errors  # joined along H: fine, but not the declared output
    assert (err.node, err.message) == (
        "output",
        "output: dim 1 is 2*H but the template expects H (got [C, 2*H, W], want [C, H, W])",
    )


def test_unfold_on_channel_axis_names_the_dimension():
    g = chain(["C_in", "H", "W"], ["C_in", "H", "W"], [("u1", "unfold", {"dim": 0, "K": "K"}, ["input"])])
    (err,) = infer_shapes(g).errors
    assert err.node == "u1" and err.dim == 0
    assert "dim 0 (C_in)" in err.message and "channel axis" in err.message


def test_out_of_range_axis():
    g = chain(["C_in", "H", "W"], ["C_in", "H", "W"], [("s1", "shift", {"dim": 5}, ["input"])])
    (err,) = infer_shapes(g).errors
    assert "dim=5 is out of range for a 3-d input [C_in, H, W]" in err.message


def test_primary_variable_in_denominator_is_rejected():
    g = chain(["K", "H", "W"], ["K", "H", "W"], [("g1", "group", {"dim": 0, "G": "C_in"}, ["input"])])
    (err,) = infer_shapes(g).errors
    assert "group g1" in err.message and "C_in would be in a denominator" in err.message


def test_output_template_mismatch_and_missing_connections():
    g = chain(["C_in", "H", "W"], ["C_out", "H", "W"], [("f", "fold", {"dim": 0}, ["input"])])
    (err,) = infer_shapes(g).errors
    assert err.node == "output" and "template expects [C_out, H, W]" in err.message

    empty = OperatorGraph(["C_in", "H", "W"], ["C_in", "H", "W"])
    assert [d.message for d in infer_shapes(empty).errors] == ["output is not connected"]

    g = chain(["C", "H", "W"], ["C", "H", "W"], [("e", "elementwise", {}, ["input"])])
    g.insert_node("b", make("broadcast"))
    g.insert_edge("e", "b", 1)
    (warning,) = infer_shapes(g).for_node("b")  # a side branch still being built
    assert (warning.severity, warning.message) == ("warning", "broadcast b has no input on port lhs")
    g.delete_edge("e", "output")
    g.insert_edge("b", "output", 0)  # once it feeds the output, the gap is an error
    (err,) = infer_shapes(g).errors
    assert (err.node, err.message) == ("b", "broadcast b has no input on port lhs")


def test_dynamic_variable_in_spatial_axis_is_refused():
    g2 = chain(
        ["C", "H", "W"], ["C", "H", "W"], [("f", "fc", {"out": "x1"}, ["input"]), ("m", "merge", {"dim": 0}, ["f"])]
    )  # [x1*H, W]: spatial
    (err,) = infer_shapes(g2).errors
    assert err.node == "m" and "dynamic variable in spatial dim 0" in err.message


def test_unreachable_node_is_a_warning_not_an_error():
    g = chain(["C", "H", "W"], ["C", "H", "W"], [("e", "elementwise", {}, ["input"])])
    g.insert_node("lonely", make("softmax"))
    report = infer_shapes(g)
    assert report.ok
    assert [(d.severity, d.message) for d in report.for_node("lonely")] == [
        ("warning", "softmax lonely has no input on port x")
    ]
    g.insert_edge("e", "lonely", 0)
    assert [d.message for d in infer_shapes(g).for_node("lonely")] == ["softmax lonely does not reach the output"]


def test_concrete_shapes_report_node_and_dimension():
    g = chain(["C_in", "H", "W"], ["G", "C_in/G", "H", "W"], [("g1", "group", {"dim": 0, "G": "G"}, ["input"])])
    report = infer_shapes(g)
    assert concrete_shapes(g, report, {"C_in": 64, "G": 4, "H": 5, "W": 5})["g1"] == (4, 16, 5, 5)
    with pytest.raises(BindingError, match=r"group g1 dim 1: C_in/G = 64/3 is not an integer"):
        concrete_shapes(g, report, {"C_in": 64, "G": 3, "H": 5, "W": 5})


def test_summary_reports_missing_bindings():
    g = chain(["C_in", "H", "W"], ["C_in", "H", "W"], [("e", "elementwise", {}, ["input"])])
    s = summarize(g, {"C_in": 3})
    assert not s.ok and "no value for H, W" in s.binding_error
    assert summarize(g).numeric_cost is None and summarize(g).ok  # no bindings at all: symbolic only


def test_validating_a_graph_grows_linearly_with_its_size():
    """Reading, summarising and reporting (`tessera info`) 4x the nodes takes well under 16x the time (it was quadratic:
    the node list rebuilt for every node); the best of three runs of each size, large enough
    (2000 nodes and up) that a loaded machine's noise does not decide."""

    def seconds(n: int) -> float:
        doc = relu_chain_document(n)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            graph = graph_from_document(doc)
            summary = summarize(graph, graph.bindings)
            assert summary.ok and len(summary.to_json()["nodes"]) == n + 2  # what `tessera info` prints
            best = min(best, time.perf_counter() - start)
        return best

    small, large = seconds(2000), seconds(8000)
    assert large / small < 10, f"2000 nodes {small:.3f} s, 8000 nodes {large:.3f} s"


def test_a_size_beyond_32_bits_is_refused_naming_the_node_and_dimension():
    doc = relu_chain_document(2)
    doc["input"]["shape"], doc["output"]["shape"] = ["C*H", "W"], ["C*H", "W"]
    doc["input"]["spatial"] = 1
    graph = graph_from_document(doc)
    assert summarize(graph, {"C": 2**15, "H": 2**15, "W": 1}).ok  # 2^30 fits
    bad = summarize(graph, {"C": 2**16, "H": 2**16, "W": 1})
    assert not bad.ok
    assert "input dim 0: C*H = 4,294,967,296 exceeds 2^31 - 1, the largest size TVM indexes" in bad.binding_error


def test_a_size_parameter_must_be_whole_where_it_is_used():
    """groups "1/G" divides evenly in the weight's shape but is no group count: validation
    refuses it (code generation would divide by zero)."""
    doc = json.loads((EXAMPLES / "grouped_conv.json").read_text())
    for node in doc["nodes"]:
        if "groups" in node["params"]:
            node["params"]["groups"] = "1/G"
    summary = summarize(graph_from_document(doc), doc["bindings"])
    assert not summary.ok and "groups: 1/G = 1/4 is not an integer (with G=4)" in summary.binding_error
