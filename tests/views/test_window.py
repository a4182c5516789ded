"""The main window around the editor: files, dialogs, docks, diagnostics,
bindings, the palette and the code panel, on real widgets offscreen."""

from __future__ import annotations

import gc
import importlib.util
import itertools
import json
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QTimer
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox

from core.ir.bindings import parse_bindings
from core.ir.serialize import load_operator, to_document
from views.editor.canvas import READABLE_ZOOM
from views.editor.palette import MIME_TYPE, primitive_from_mime
from views.theme import RESOURCES

from .helpers import deliver_drop, drag_mouse, type_bindings

pytestmark = pytest.mark.gui
EXAMPLES = sorted((RESOURCES / "examples").glob("*.json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_opens_and_displays(window, path):
    assert window.open_file(path)
    doc, scene = window.document, window.scene
    assert to_document(doc.graph) == to_document(load_operator(path))
    for node in doc.graph.g:
        card = scene.node_item(node)
        assert card is not None and card.pos().toTuple() == doc.graph.pos(node)
        assert card.info.state == "ok" and card.info.shape.startswith("[")
        assert card.info.numeric  # the file's bindings give numbers
    for src, dst, _ in doc.graph.edges():
        assert scene.edge_item(src, dst).label.startswith("[")
    assert [m[0] for m in window.diagnostics.messages()] == ["ok"]
    assert "FLOPs" in window.bindings_bar.totals.text() and "valid" in window.bindings_bar.totals.text()
    assert window.windowTitle().startswith(path.name) and not window.isWindowModified()
    visible = window.view.mapToScene(window.view.viewport().rect()).boundingRect()
    zoom = window.view.transform().m11()
    assert zoom >= READABLE_ZOOM  # never shrunk past reading; what does not fit is a scroll away
    assert visible.contains(scene.nodes_rect()) or visible.contains(scene.node_item("input").sceneBoundingRect())


def test_bad_files_open_with_a_dialog_not_a_traceback(window, dialogs, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    assert not window.open_file(broken)
    kind, _title, text = dialogs.calls[-1]
    assert kind == "critical" and "broken.json" in text and "not valid JSON" in text
    unknown = tmp_path / "unknown.json"
    doc = to_document(load_operator(EXAMPLES[0]))
    doc["nodes"][0]["op"] = "teleport"
    unknown.write_text(json.dumps(doc))
    assert not window.open_file(unknown)
    assert "unknown primitive 'teleport'" in dialogs.calls[-1][2]
    assert window.document.path is None  # the window still holds the document it had


def test_quitting_with_unsaved_changes_asks(window, dialogs):
    window.document.editor.add_node("shift")
    assert window.isWindowModified()
    dialogs.answer = QMessageBox.StandardButton.Cancel
    assert not window.close()
    assert window.isVisible() and dialogs.calls[-1][0] == "question"
    dialogs.answer = QMessageBox.StandardButton.Discard
    calls = len(dialogs.calls)
    assert window.close()
    assert len(dialogs.calls) == calls + 1


def test_saving_from_the_quit_question(window, dialogs, monkeypatch, tmp_path):
    window.document.editor.add_node("shift")
    target = tmp_path / "kept.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    dialogs.answer = QMessageBox.StandardButton.Save
    assert window.close()
    assert [n["op"] for n in to_document(load_operator(target))["nodes"]] == ["shift"]


def test_unmodified_window_closes_without_asking(window, dialogs):
    window.open_file(EXAMPLES[0])
    assert window.close() and dialogs.calls == []


def test_new_and_title_track_modification(window):
    window.open_file(EXAMPLES[0])
    assert window.windowTitle() == f"{EXAMPLES[0].name}[*] — Tessera"
    window.document.editor.move({"input": (-50.0, 0.0)})
    assert window.isWindowModified()
    window.commands["undo"].trigger()
    assert not window.isWindowModified()  # back at the saved state
    window.commands["new"].trigger()
    assert window.document.path is None and window.windowTitle().startswith("Untitled")
    assert window.document.graph.primitive_nodes() == ["pointwise"] and window.document.summary.ok


def test_docks_and_recent_files_persist_between_runs(make_window):
    first = make_window()
    first.open_file(EXAMPLES[1])
    first.docks["inspector"].close()
    assert first.close()
    second = make_window()
    assert second.on_start_page() and EXAMPLES[1].name in second.start_page.recent.item(0).text()
    second.new_document()  # the editor's docks come back as the user left them
    assert second.docks["inspector"].isHidden() and not second.docks["palette"].isHidden()
    second.recent_menu.aboutToShow.emit()
    names = [a.text() for a in second.recent_menu.actions()]
    assert names[0] == EXAMPLES[1].name


def test_clicking_a_diagnostic_selects_its_node(window):
    window.open_file(RESOURCES / "examples" / "conv2d.json")
    window.document.editor.set_params("unfold_w", dim=0)  # a channel axis: an error
    panel = window.diagnostics
    row = next(i for i in range(panel.topLevelItemCount()) if panel.topLevelItem(i).text(1) == "unfold_w")
    assert panel.topLevelItem(row).text(0) == "error"
    assert window.scene.node_item("unfold_w").info.state == "error"
    rect = panel.visualItemRect(panel.topLevelItem(row))
    drag_mouse(panel.viewport(), rect.center(), rect.center(), steps=1)
    assert window.scene.selected_nodes() == ["unfold_w"]
    assert window.inspector.node == "unfold_w"
    assert window.docks["diagnostics"].windowTitle() == "Diagnostics (1)"


def test_bindings_bar_updates_numbers_and_shows_refusals_beside_the_field(qtbot, window):
    window.open_file(RESOURCES / "examples" / "conv2d.json")
    bar = window.bindings_bar
    card = window.scene.node_item("input")
    assert card.info.numeric == "64×56×56"
    type_bindings(qtbot, bar, "C_in=8, C_out=16, H=10, W=12, K=3")
    assert card.info.numeric == "8×10×12"
    assert window.document.summary.numeric_cost["params"] == 8 * 16 * 9
    type_bindings(qtbot, bar, "C_in=eight")
    assert bar.edit.property("invalid") is True and "NAME=INTEGER" in bar.error.text()
    assert bar.error.isVisible() and not bar.totals.isVisible()  # the reason shows without hovering
    assert card.info.numeric == "8×10×12"  # the last good bindings stay in force
    type_bindings(qtbot, bar, "C_in=8, Cout=16")
    assert bar.error.isVisible() and "did you mean C_out?" in bar.error.text()
    assert card.info.numeric == "8×10×12"
    type_bindings(qtbot, bar, "C_in=8")  # what the bar holds is the document's sizes: the others go
    assert card.info.numeric == "" and not bar.error.isVisible()
    assert any("no value for C_out, H, K, W: type C_out=…" in m for _, _, m in window.diagnostics.messages())


def test_bindings_are_part_of_the_document(qtbot, window, tmp_path):
    path = tmp_path / "conv.json"
    path.write_text((RESOURCES / "examples" / "conv2d.json").read_text())
    window.open_file(path)
    assert not window.isWindowModified()
    type_bindings(qtbot, window.bindings_bar, "C_in=8, C_out=16, H=10, W=12, K=5")
    assert window.isWindowModified() and window.commands["undo"].text() == "&Undo Change bindings"
    window.commands["undo"].trigger()
    assert parse_bindings(window.bindings_bar.edit.text()) == {"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3}
    window.commands["redo"].trigger()
    assert parse_bindings(window.bindings_bar.edit.text()) == {"C_in": 8, "C_out": 16, "H": 10, "W": 12, "K": 5}
    window.commands["save"].trigger()
    assert load_operator(path).bindings == {"C_in": 8, "C_out": 16, "H": 10, "W": 12, "K": 5}
    window.open_file(path)
    assert window.scene.node_item("input").info.numeric == "8×10×12"


def test_palette_search_tooltips_and_mime(window):
    palette = window.primitive_palette
    palette.search.setText("soft")
    assert palette.visible_ops() == ["softmax"]
    palette.search.setText("")
    assert len(palette.visible_ops()) == 15  # Canvas's, Syno's and Tessera's concat
    leaf = palette.items_for("concat")[0]
    assert "Tessera · blending" in leaf.toolTip(0) and "a, b" in leaf.toolTip(0)
    leaf = palette.items_for("broadcast")[0]
    assert "lhs, rhs" in leaf.toolTip(0) and "add, sub, mul, min, max" in leaf.toolTip(0)
    mime = palette.mime_data("share")
    assert mime.hasFormat(MIME_TYPE) and primitive_from_mime(mime) == "share"
    foreign = QMimeData()
    foreign.setText("share")
    assert primitive_from_mime(foreign) is None
    assert not deliver_drop(window.view.viewport(), foreign, QPoint(100, 100))
    assert window.document.graph.primitive_nodes() == []


def test_double_click_in_palette_adds_at_the_centre(window):
    window.primitive_palette.primitiveActivated.emit("fold")
    (node,) = window.document.graph.primitive_nodes()
    assert window.document.graph.prim(node).op == "fold" and window.scene.selected_nodes() == [node]


@pytest.mark.tvm  # the worker imports TVM to print TVMScript (nothing is compiled)
def test_code_panel_runs_in_a_worker_and_reports(window, qtbot):
    window.open_file(RESOURCES / "examples" / "depthwise_separable.json")
    code = window.code
    assert window.is_idle()  # hidden behind Diagnostics: nothing generated yet
    window.docks["code"].raise_()
    qtbot.waitUntil(lambda: code._job is not None, timeout=5000)
    assert "worker process" in code.status.text()
    qtbot.waitUntil(window.is_idle, timeout=180_000)
    torch_tab, tvm_tab = code.editors["pytorch"], code.editors["tvmscript"]
    if importlib.util.find_spec("core.codegen.to_torch") is None:
        assert "code generator not available" in torch_tab.placeholderText()
    else:
        assert "class " in torch_tab.toPlainText() and "def forward" in torch_tab.toPlainText()
    if importlib.util.find_spec("tvm") is None:
        assert "TVMScript:" in tvm_tab.placeholderText() and "tvm" in tvm_tab.placeholderText()
    else:
        assert "prim_func" in tvm_tab.toPlainText()

    window.document.editor.set_params("unfold_w", dim=0)  # breaks the operator: no code, no worker
    assert torch_tab.toPlainText() == "" and "has errors" in torch_tab.placeholderText()
    assert window.is_idle()


def test_an_invalid_operator_is_marked_where_it_breaks(window):
    assert window.open_file(Path(__file__).parent / "data" / "involution_broken.json")
    scene = window.scene
    assert scene.node_item("unfold_w").info.state == "error"
    assert "channel axis" in scene.node_item("unfold_w").toolTip()
    assert scene.node_item("stray_softmax").info.state == "warning"
    assert scene.node_item("merge_groups").info.shape == "—"  # downstream of the error: no shape
    assert scene.node_item("unfold_h").info.shape == "[C_in, K, H, W]"
    assert [(sev, node) for sev, node, _ in window.diagnostics.messages()] == [
        ("error", "unfold_w"),
        ("warning", "stray_softmax"),
    ]
    assert window.bindings_bar.totals.text().startswith("1 error")


def test_a_page_built_in_pieces_lets_the_window_run_between_them(qtbot, window):
    """Each piece of a page's build is its own turn of the event loop: a timer that fell due
    during a piece runs before the next piece (two pieces back to back would stall the window
    for both); no garbage collection runs during the build, and the built page is frozen out of
    the collector's full walks."""
    events: list[str] = []
    collecting: list[bool] = []

    def build():
        for name in ("first", "second", "third", "fourth"):
            time.sleep(0.03)  # longer than the heartbeat's interval: it falls due meanwhile
            events.append(name)
            collecting.append(gc.isenabled())
            yield name
        return QLabel("built")

    window.pages.add("probe", "&Probe", "Ctrl+9", "a page built in pieces", build=build)
    gc.unfreeze()
    frozen = gc.get_freeze_count()
    heartbeat = QTimer()
    heartbeat.setInterval(5)
    heartbeat.timeout.connect(lambda: events.append("tick"))
    heartbeat.start()
    try:
        window.show_page("probe")
        qtbot.waitUntil(lambda: not window.pages.building)
    finally:
        heartbeat.stop()
    pieces = [i for i, e in enumerate(events) if e != "tick"]
    assert len(pieces) == 4
    assert all(b - a > 1 for a, b in itertools.pairwise(pieces)), events  # a tick between every two pieces
    assert window.pages.current == "probe" and window.pages.widget("probe").text() == "built"
    assert gc.get_freeze_count() > frozen  # the built page's objects are out of the collector's walks
    assert collecting == [False] * 4 and gc.isenabled()


def test_a_build_abandoned_as_the_window_closes_lets_the_collector_run_again(qtbot, window):
    def build():
        yield "first"
        yield "never reached"
        return QLabel("built")

    window.pages.add("probe", "&Probe", "Ctrl+9", "a page built in pieces", build=build)
    window.show_page("probe")
    assert window.pages.building and not gc.isenabled()
    window.pages.stop_building()
    assert not window.pages.building and gc.isenabled()


def test_a_build_started_during_another_lets_the_collector_run_again_once_over(qtbot, window):
    def build():
        yield "first"
        return QLabel("built")

    window.pages.add("probe", "&Probe", "Ctrl+9", "a page built in pieces", build=build)
    window.pages.add("other", "&Other", "Ctrl+8", "another page built in pieces", build=build)
    window.show_page("probe")
    window.show_page("other")  # before the first build is over
    qtbot.waitUntil(lambda: not window.pages.building)
    assert gc.isenabled()
