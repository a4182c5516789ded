"""Undo/redo of every edit, events, the modified flag and connection rules."""

import pytest

from core.ir.editing import Editor
from core.ir.errors import ConnectionRefused, ParamError
from core.ir.graph import OperatorGraph
from core.ir.serialize import load_operator, to_document
from tests.support import EXAMPLES


def _snapshot(g):
    return to_document(g)


def test_every_edit_undoes_and_redoes_exactly():
    g = OperatorGraph(["C_in", "H", "W"], ["C_out", "H", "W"])
    ed = Editor(g)
    states = [_snapshot(g)]
    u = ed.add_node("unfold", {"dim": 1, "K": "K"}, pos=(100, 0))
    states.append(_snapshot(g))
    ed.connect("input", u)
    states.append(_snapshot(g))
    f = ed.add_node("fc", {"out": "C_out"})
    states.append(_snapshot(g))
    ed.connect(u, f)
    states.append(_snapshot(g))
    ed.connect(f, "output")
    states.append(_snapshot(g))
    ed.set_params(u, K="3")
    states.append(_snapshot(g))
    ed.move({u: (150, 20), f: (300, 0)})
    states.append(_snapshot(g))
    ed.disconnect(u, f)
    states.append(_snapshot(g))
    ed.remove([u])
    states.append(_snapshot(g))
    for expected in reversed(states[:-1]):
        ed.undo()
        assert _snapshot(g) == expected
    assert not ed.undo_stack.can_undo
    for expected in states[1:]:
        ed.redo()
        assert _snapshot(g) == expected


def test_remove_is_one_step_and_restores_edges():
    g = load_operator(EXAMPLES / "involution.json")
    before = _snapshot(g)
    ed = Editor(g)
    ed.remove(["apply_kernel", "unfold_w"])
    assert "apply_kernel" not in g.g and not g.g.has_edge("unfold_h", "unfold_w")
    ed.undo()
    assert _snapshot(g) == before


def test_modified_flag_follows_the_save_point():
    g = OperatorGraph(["C", "H", "W"], ["C", "H", "W"])
    ed = Editor(g)
    assert not ed.modified
    n = ed.add_node("elementwise")
    assert ed.modified
    ed.undo_stack.set_clean()
    ed.set_params(n, fn="tanh")
    assert ed.modified
    ed.undo()
    assert not ed.modified
    ed.undo()
    assert ed.modified
    ed.redo()
    assert not ed.modified
    ed.undo()
    ed.add_node("softmax")  # the save point is now unreachable
    assert ed.modified
    for _ in range(3):
        ed.undo()
    assert ed.modified


def test_events_are_emitted_for_views():
    g = OperatorGraph(["C", "H", "W"], ["C", "H", "W"])
    seen = []
    g.subscribe(lambda e: seen.append((e.kind, e.node or e.edge)))
    ed = Editor(g)
    n = ed.add_node("elementwise")
    ed.connect("input", n)
    ed.set_params(n, fn="abs")
    ed.undo()
    assert seen == [("node_added", n), ("edge_added", ("input", n, 0)), ("params_changed", n), ("params_changed", n)]


@pytest.mark.parametrize(
    "src,dst,port,reason",
    [
        ("output", "e1", 0, "output node has no outgoing port"),
        ("e1", "input", 0, "input node takes no inputs"),
        ("e1", "e1", 0, "cannot feed itself"),
        ("input", "e1", 1, "has no input port 1"),
        ("input", "e2", 0, "already fed by e1"),
        ("e2", "e1", 0, "already fed by input"),
        ("e2", "b1", 0, "same tensor on both inputs"),
        ("b1", "e1", 0, "already fed"),
        ("nope", "e1", 0, "no node named"),
    ],
)
def test_connection_rules_refuse_with_reason(src, dst, port, reason):
    g = OperatorGraph(["C", "H", "W"], ["C", "H", "W"])
    ed = Editor(g)
    for n in ("e1", "e2"):
        ed.add_node("elementwise", node=n)
    ed.add_node("broadcast", node="b1")
    ed.connect("input", "e1")
    ed.connect("e1", "e2")
    ed.connect("e2", "b1", 1)
    before = _snapshot(g)
    with pytest.raises(ConnectionRefused, match=reason):
        ed.connect(src, dst, port)
    assert _snapshot(g) == before and ed.undo_stack.undo_text == "Connect"


def test_cycle_is_refused():
    g = OperatorGraph(["C", "H", "W"], ["C", "H", "W"])
    ed = Editor(g)
    a, b = ed.add_node("elementwise"), ed.add_node("broadcast")
    ed.connect(a, b, 0)
    with pytest.raises(ConnectionRefused, match="cycle"):
        ed.connect(b, a)


def test_bad_parameters_are_refused_before_recording():
    g = OperatorGraph(["C", "H", "W"], ["C", "H", "W"])
    ed = Editor(g)
    n = ed.add_node("group")
    depth = len(ed.undo_stack)
    for bad in ({"G": "2*"}, {"dim": "zero"}, {"nonsense": 1}):
        with pytest.raises(ParamError):
            ed.set_params(n, **bad)
    with pytest.raises(ParamError, match="must be one of"):
        ed.add_node("elementwise", {"fn": "cube"})
    assert len(ed.undo_stack) == depth


def test_fc_gets_a_fresh_dynamic_variable():
    g = OperatorGraph(["C", "H", "W"], ["C", "H", "W"])
    ed = Editor(g)
    a, b = ed.add_node("fc"), ed.add_node("fc")
    assert (g.prim(a).params["out"], g.prim(b).params["out"]) == ("x1", "x2")
