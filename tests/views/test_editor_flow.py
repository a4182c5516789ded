"""The operator editor driven like a person would: palette drag, mouse wiring,
live shapes and diagnostics, inspector edits, undo/redo, save and reopen."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QDrag
from PySide6.QtWidgets import QFileDialog

from core.ir.layout import layered_layout
from core.ir.serialize import to_document
from views.theme import RESOURCES

from .helpers import card_header, click_entry, deliver_drop, drag_mouse, press_and_hover, release

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def _draw_from_scratch(window):
    """Every test here starts as a person drawing an operator does: New operator > Empty."""
    click_entry(window.start_page.templates, "Empty operator")
    assert not window.on_start_page() and window.document.graph.primitive_nodes() == []


def drag_from_palette(window, monkeypatch, op: str, scene_pos: QPointF) -> list[bool]:
    """A real mouse drag on the palette; the QDrag it starts is delivered onto the canvas."""
    view, tree = window.view, window.primitive_palette.tree
    item = window.primitive_palette.items_for(op)[0]
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    target = view.mapFromScene(scene_pos)
    delivered = []

    def exec_drag(drag, *args):  # the windowing system's part: carry the drag over the canvas and drop it
        delivered.append(deliver_drop(view.viewport(), drag.mimeData(), target))
        return Qt.DropAction.CopyAction

    monkeypatch.setattr(QDrag, "exec", exec_drag)
    drag_mouse(tree.viewport(), rect.center(), rect.center() + QPoint(80, 10))
    return delivered


def wire(window, src: str, dst: str, port: int = 0) -> None:
    scene, view = window.scene, window.view
    start = view.mapFromScene(scene.node_item(src).output.scenePos())
    end = view.mapFromScene(scene.node_item(dst).inputs[port].scenePos())
    drag_mouse(view.viewport(), start, end)


def undo_depth(window) -> int:
    stack = window.document.editor.undo_stack
    return len(stack._done)


def test_build_check_fix_undo_save_reopen(window, make_window, monkeypatch, tmp_path):
    doc, scene = window.document, window.scene
    assert drag_from_palette(window, monkeypatch, "unfold", QPointF(260, 0)) == [True]
    assert [doc.graph.prim(n).op for n in doc.graph.primitive_nodes()] == ["unfold"]
    node = doc.graph.primitive_nodes()[0]
    assert doc.graph.pos(node) == (260.0, 0.0)
    assert scene.node_item(node) is not None and scene.selected_nodes() == [node]

    wire(window, "input", node)
    assert ("input", node, 0) in doc.graph.edges()
    assert scene.edge_item("input", node).label == "[C_in, H, W]"  # the wire shows its tensor's shape
    card = scene.node_item(node)
    assert card.info.state != "error" and card.info.shape == "[C_in, K, H, W]"  # the default: the last, spatial axis

    drag_mouse(
        window.view.viewport(),
        window.view.mapFromScene(card_header(card)),
        window.view.mapFromScene(card_header(card)),
        steps=1,
    )  # a click selects it
    assert window.inspector.node == node
    depth = undo_depth(window)
    window.inspector.fields["dim"].editor.setValue(0)  # a channel axis
    assert undo_depth(window) == depth + 1
    assert card.info.state == "error" and "spatial axis" in card.info.tooltip
    assert any(sev == "error" and n == node and "spatial axis" in m for sev, n, m in window.diagnostics.messages())

    window.commands["undo"].trigger()
    assert doc.graph.prim(node).params["dim"] == -1 and card.info.state != "error"
    assert window.inspector.fields["dim"].editor.value() == -1
    window.commands["redo"].trigger()
    assert doc.graph.prim(node).params["dim"] == 0 and card.info.state == "error"
    window.inspector.fields["dim"].editor.setValue(1)  # the fix
    assert card.info.state != "error" and card.info.shape == "[C_in, K, H, W]"
    assert not any(sev == "error" and n == node for sev, n, _ in window.diagnostics.messages())

    assert window.isWindowModified()
    target = tmp_path / "built"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    window.commands["save"].trigger()
    saved = tmp_path / "built.json"
    assert saved.exists() and not window.isWindowModified()
    assert "built.json" in window.windowTitle()

    other = make_window()
    assert other.open_file(saved)
    assert to_document(other.document.graph) == to_document(doc.graph)
    assert json.loads(saved.read_text())["nodes"][0]["params"] == {"dim": 1, "K": "K"}


def test_refused_connection_shows_the_reason(window):
    doc, scene, view = window.document, window.scene, window.view
    node = doc.editor.add_node("unfold", {"dim": 1}, pos=(250, 0))
    doc.editor.connect("input", node)
    edges = doc.graph.edges()

    start = view.mapFromScene(scene.node_item("input").output.scenePos())
    occupied = view.mapFromScene(scene.node_item(node).inputs[0].scenePos())
    press_and_hover(view.viewport(), start, occupied)
    assert scene.node_item(node).inputs[0].feedback == "refuse"
    reason = window.statusBar().currentMessage()
    assert "Cannot connect input → unfold1" in reason and "already fed by input" in reason
    assert scene._hint.isVisible() and "already fed by input" in scene._hint.text
    release(view.viewport(), occupied)
    assert doc.graph.edges() == edges
    assert "already fed by input" in window.statusBar().currentMessage()  # the reason stays readable
    assert not scene._hint.isVisible()

    own_output = view.mapFromScene(scene.node_item(node).output.scenePos())
    drag_mouse(view.viewport(), own_output, occupied)
    assert "cannot feed itself" in window.statusBar().currentMessage()
    assert doc.graph.edges() == edges


def test_broadcast_has_two_named_ports(window):
    doc, scene = window.document, window.scene
    node = doc.editor.add_node("broadcast", pos=(250, 0))
    card = scene.node_item(node)
    assert [p.name for p in card.inputs] == ["lhs", "rhs"]
    assert card.inputs[0].scenePos().y() < card.inputs[1].scenePos().y()
    wire(window, "input", node, port=1)
    assert ("input", node, 1) in doc.graph.edges()
    assert any("no input on port lhs" in m for _, n, m in window.diagnostics.messages() if n == node)


def test_inspector_edits_are_single_undo_steps_and_validated(window):
    doc = window.document
    node = doc.editor.add_node("group", {"dim": 0, "G": "G"}, pos=(250, 0))
    window.scene.select_node(node)
    field = window.inspector.fields["G"]
    depth = undo_depth(window)

    field.editor.setText("C_in/4")
    field.editor.editingFinished.emit()
    assert doc.graph.prim(node).params["G"] == "C_in/4"
    assert undo_depth(window) == depth + 1

    field.editor.setText("K +")
    field.editor.editingFinished.emit()
    assert undo_depth(window) == depth + 1  # rejected, not recorded
    assert "size expression 'K +'" in window.inspector.error.text()
    assert doc.graph.prim(node).params["G"] == "C_in/4"

    window.commands["undo"].trigger()
    assert doc.graph.prim(node).params["G"] == "G"
    assert field.editor.text() == "G"


def test_inspector_choice_and_dims_fields(window):
    doc = window.document
    ew = doc.editor.add_node("elementwise", pos=(250, 0))
    window.scene.select_node(ew)
    combo = window.inspector.fields["fn"].editor
    combo.setCurrentText("gelu")
    combo.activated.emit(combo.currentIndex())
    assert doc.graph.prim(ew).params["fn"] == "gelu"

    share = doc.editor.add_node("share", pos=(250, 150))
    window.scene.select_node(share)
    dims = window.inspector.fields["dims"].editor
    dims.setText("0, 1")
    dims.editingFinished.emit()
    assert doc.graph.prim(share).params["dims"] == [0, 1]
    dims.setText("zero")
    dims.editingFinished.emit()
    assert "axis indices" in window.inspector.error.text()
    out = window.inspector.fields["out"].editor
    out.setText("")
    out.editingFinished.emit()  # optional size: empty means none
    assert doc.graph.prim(share).params["out"] is None


def test_move_by_mouse_is_one_undo_step_and_snaps(window):
    doc, scene, view = window.document, window.scene, window.view
    node = doc.editor.add_node("shift", pos=(250, 0))
    card = scene.node_item(node)
    depth = undo_depth(window)
    start = view.mapFromScene(card_header(card))
    drag_mouse(view.viewport(), start, start + QPoint(93, 47), steps=8)
    x, y = doc.graph.pos(node)
    assert undo_depth(window) == depth + 1
    assert (x % 10, y % 10) == (0, 0) and x > 250 and y > 0
    assert card.pos() == QPointF(x, y)
    window.commands["undo"].trigger()
    assert doc.graph.pos(node) == (250.0, 0.0) and card.pos() == QPointF(250, 0)


def test_rubber_band_select_and_delete_key(window, qtbot):
    doc, scene, view = window.document, window.scene, window.view
    a = doc.editor.add_node("shift", pos=(250, 200))
    b = doc.editor.add_node("shift", pos=(450, 200))
    doc.editor.connect("input", a)
    doc.editor.connect(a, b)
    view.resetTransform()
    view.centerOn(350, 200)
    corner1 = view.mapFromScene(QPointF(140, 120))
    corner2 = view.mapFromScene(QPointF(560, 280))
    drag_mouse(view.viewport(), corner1, corner2)
    assert sorted(scene.selected_nodes()) == sorted([a, b])

    depth = undo_depth(window)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    assert doc.graph.primitive_nodes() == [] and doc.graph.edges() == []
    assert scene.node_item(a) is None and scene.edge_item("input", a) is None
    assert undo_depth(window) == depth + 1
    window.commands["undo"].trigger()
    assert sorted(doc.graph.primitive_nodes()) == sorted([a, b])
    assert scene.edge_item(a, b) is not None

    scene.clearSelection()
    scene.edge_item(a, b).setSelected(True)
    window.commands["delete"].trigger()  # an edge alone
    assert (a, b, 0) not in doc.graph.edges() and a in doc.graph.g
    window.commands["select_all"].trigger()
    assert set(scene.selected_nodes()) == set(doc.graph.g) and scene.selected_edges() == [("input", a)]


def test_auto_layout_is_one_undo_step(window):
    window.load(RESOURCES / "examples" / "shift_conv.json")
    doc = window.document
    doc.editor.move({"add": (990.0, 990.0)})
    depth = undo_depth(window)
    window.commands["layout"].trigger()
    expected = layered_layout(doc.graph)
    assert {n: doc.graph.pos(n) for n in doc.graph.g} == {n: tuple(p) for n, p in expected.items()}
    assert undo_depth(window) == depth + 1
    assert window.scene.node_item("add").pos() == QPointF(*expected["add"])
    window.commands["undo"].trigger()
    assert doc.graph.pos("add") == (990.0, 990.0)


def test_zoom_actions(window):
    window.new_document()
    view = window.view
    view.resetTransform()
    window.commands["zoom_in"].trigger()
    assert view.transform().m11() == pytest.approx(1.25)
    window.commands["zoom_out"].trigger()
    assert view.transform().m11() == pytest.approx(1.0)
    window.commands["zoom_fit"].trigger()
    assert view.mapToScene(view.viewport().rect()).boundingRect().contains(window.scene.nodes_rect())
