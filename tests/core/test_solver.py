"""Dynamic-variable solving by shape matching, on the published examples."""

from core.analysis.shapes import infer_shapes
from core.analysis.solver import match_candidates, solutions, substitute
from core.ir.symbolic import Size, parse_size
from core.ir.tensor import Dim, TensorType
from tests.support import chain


def _t(*sizes, spatial=2):
    return TensorType(Dim(parse_size(s), i >= len(sizes) - spatial) for i, s in enumerate(sizes))


def test_published_shape_matching_example():
    # docs/papers.md (Canvas): LHS [x1, K_H, H, W], RHS [G, x2/G, K_H, K_W, H, W] gives x1 in {1, x2, K_W, x2*K_W}
    lhs = _t("x1", "K_H", "H", "W")
    rhs = _t("G", "x2/G", "K_H", "K_W", "H", "W")
    assert set(match_candidates(lhs, rhs, "x1")) == {Size(1), parse_size("x2"), parse_size("K_W"), parse_size("x2*K_W")}


def test_broadcast_with_dynamic_lhs_is_pending_not_an_error():
    g = chain(
        ["C", "H", "W"],
        ["C", "K", "H", "W"],
        [
            ("f", "fc", {"out": "x1"}, ["input"]),  # [x1, H, W]
            ("u", "unfold", {"dim": 1, "K": "K"}, ["input"]),  # [C, K, H, W]
            ("b", "broadcast", {"fn": "mul"}, ["f", "u"]),
        ],
    )
    report = infer_shapes(g)
    assert report.ok and not report.solved
    (c,) = report.constraints
    assert c.node == "b" and c.var == "x1"
    assert {str(v) for v in c.candidates} == {"1", "C", "K", "C*K"}
    found = solutions(g)
    assert {str(s["x1"]) for s in found} == {"1", "C", "K", "C*K"}
    for s in found:
        assert infer_shapes(substitute(g, s)).solved


def test_output_template_fixes_a_dynamic_variable():
    g = chain(["C_in", "H", "W"], ["C_out", "H", "W"], [("f", "fc", {"out": "x1"}, ["input"])])
    report = infer_shapes(g)
    (c,) = report.constraints
    assert c.node == "output" and c.candidates == (parse_size("C_out"),)
    assert solutions(g) == [{"x1": parse_size("C_out")}]


def test_chained_dynamic_variables_are_solved_together():
    # x1 must divide C*K (broadcast), then x2 must equal C_out (output)
    g = chain(
        ["C", "H", "W"],
        ["C_out", "H", "W"],
        [
            ("f", "fc", {"out": "x1"}, ["input"]),
            ("u", "unfold", {"dim": 1, "K": "K"}, ["input"]),
            ("b", "broadcast", {"fn": "add"}, ["f", "u"]),
            ("f2", "fc", {"out": "x2"}, ["b"]),
        ],
    )
    found = solutions(g)
    assert len(found) == 4 and all(s["x2"] == parse_size("C_out") for s in found)


def test_no_solution_when_output_cannot_match():
    g = chain(["C", "H", "W"], ["C", "H", "W", "K"], [("f", "fc", {"out": "x1"}, ["input"])])
    assert solutions(g) == []
