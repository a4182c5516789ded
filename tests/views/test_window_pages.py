"""The window as a new user meets it: it fits a small screen whatever page is shown, every
action and the title follow the page shown (the Sequences page saves, undoes, exports and
evaluates its sequence, never the operator hidden in the editor), a size that is not whole
points at its node, Export says what it wrote where, operators have names, and graphs open
whole."""

from __future__ import annotations

import json
import shutil

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QFileDialog, QLabel

from app.page_table import PAGE_KEYS
from core.ir.serialize import read_document
from core.store import Store
from tests.support import EXAMPLES
from views.editor.canvas import READABLE_ZOOM

pytestmark = pytest.mark.gui
CTRL = Qt.KeyboardModifier.ControlModifier
SEQUENCE = EXAMPLES / "sequences" / "seq_spatial_grouping.json"


@pytest.fixture
def stored(window, store_path):
    """The window over a store with two measured results (so the Explorer and Gallery have content)."""
    with Store(store_path) as store:
        for name, latency in (("conv2d", 1.0), ("depthwise_separable", 0.5)):
            document = read_document(EXAMPLES / f"{name}.json")
            operator = store.add_operator(document, name)
            store.add_measurement(
                operator, None, {"latency_ms": latency, "flops": 1e6 / latency, "bindings": document["bindings"]}
            )
    window.explore.store_path = str(store_path)
    window.explore.actions["autostart"].setChecked(False)
    return window


def visit(qtbot, window, key: str) -> None:
    window.show_page(key)
    qtbot.waitUntil(window.is_idle, timeout=20_000)  # a page may be built a piece at a time


@pytest.mark.parametrize("screen", [QSize(1280, 720), QSize(2560, 1440)], ids=["1280x720", "2560x1440"])
def test_no_page_grows_the_window(qtbot, stored, screen):
    window = stored
    window.resize(screen)
    window.load(EXAMPLES / "involution.json")
    window.load(SEQUENCE)
    for key in (*PAGE_KEYS, "editor"):
        visit(qtbot, window, key)
        assert window.size() == screen, f"the {key} page resized the window to {window.size().toTuple()}"
        hint = window.minimumSizeHint()
        assert hint.width() <= 1280 and hint.height() <= 720, f"the {key} page needs {hint.toTuple()}"
    window.show_start_page()
    assert window.size() == screen

    visit(qtbot, window, "explorer")
    window.explore.show_jobs()  # a dock at the bottom: the plot keeps half the page, the results two rows
    qtbot.waitUntil(window.is_idle, timeout=20_000)
    view = window.explore.view
    table = view.browser.table
    assert window.size() == screen and table.viewport().height() >= 2 * table.verticalHeader().defaultSectionSize()
    assert view.plot.height() >= view.height() / 2


def test_the_sequences_page_saves_undoes_and_evaluates_its_sequence(qtbot, stored, tmp_path, monkeypatch):
    window = stored
    operator, sequence = tmp_path / "conv2d.json", tmp_path / "grouping.json"
    shutil.copy(EXAMPLES / "conv2d.json", operator)
    shutil.copy(SEQUENCE, sequence)
    window.open_file(operator)
    window.document.editor.add_node("shift")  # an unsaved edit of the operator, hidden behind the sequence
    operator_text = operator.read_text()
    assert window.open_file(sequence) and window.pages.current == "sequences"
    assert window.windowTitle().startswith("grouping.json") and not window.isWindowModified()

    editor = window.sequences
    steps = len(editor.sequence.steps)
    editor.remove_step(steps - 1)
    assert window.isWindowModified() and window.commands["undo"].text().startswith("&Undo Remove")
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    assert len(editor.sequence.steps) == steps and not window.isWindowModified()
    window.commands["redo"].trigger()
    assert len(editor.sequence.steps) == steps - 1
    qtbot.keyClick(window, Qt.Key.Key_S, CTRL)
    assert len(json.loads(sequence.read_text())["steps"]) == steps - 1  # the sequence was saved...
    assert operator.read_text() == operator_text and window.document.modified  # ...not the hidden operator
    assert not window.isWindowModified() and window.windowTitle().startswith("grouping.json")

    evaluate = window.explore.actions["evaluate"]
    assert evaluate.isEnabled()
    evaluate.trigger()
    dialog = window.explore.dialog
    headings = [label.text() for label in dialog.findChildren(QLabel)]
    assert "<b>Evaluate seq_spatial_grouping</b>" in headings  # the sequence's result, not conv2d
    dialog.reject()

    window.commands["export"].trigger()
    export = window.export_dialog
    assert export.windowTitle() == "Export seq_spatial_grouping"
    assert export.format_box.findData("sequence") < 0  # Save As writes the sequence; an export, its operator
    export.reject()
    visit(qtbot, window, "editor")
    assert window.windowTitle().startswith("conv2d.json") and window.isWindowModified()


def test_a_size_that_is_not_whole_points_at_its_node(window):
    window.load(EXAMPLES / "grouped_conv.json")
    window.document.editor.set_params("grouped_fc", groups="7")  # C_in*K^2/7 = 576/7 weights per group
    card = window.scene.node_item("grouped_fc")
    assert card.info.state == "error" and "576/7" in card.info.tooltip
    [row] = [m for m in window.diagnostics.messages() if m[0] == "error"]
    assert row[1] == "grouped_fc" and "576/7 is not an integer" in row[2]
    bar = window.bindings_bar.totals.text()
    assert bar.startswith("1 error") and "valid" not in bar
    assert window.docks["diagnostics"].windowTitle() == "Diagnostics (1)"
    tip = window.explore.actions["evaluate"].toolTip()
    assert "grouped_fc" in tip and "576/7" in tip and "Bindings bar or the node's parameters" in tip


def test_export_says_what_it_wrote_where_and_starts_in_the_users_folder(qtbot, window, settings_path, tmp_path):
    window.load(EXAMPLES / "conv2d.json")
    window.commands["export"].trigger()
    dialog = window.export_dialog
    assert EXAMPLES.name not in dialog.path_edit.text()  # not the bundled examples' folder
    assert dialog.format_box.findData("sequence") < 0  # a hand-made operator was found by no sequence
    dialog.set_format("dot")
    dialog.set_path(tmp_path / "mine.dot")
    with qtbot.waitSignal(dialog.exported, timeout=60_000):
        dialog.export_button.click()
    assert window.statusBar().currentMessage() == f"Exported dot: wrote {tmp_path / 'mine.dot'}"
    window.commands["export"].trigger()  # the next export starts where the last one went
    assert window.export_dialog.path_edit.text() == str(tmp_path.resolve() / "conv2d.py")
    window.export_dialog.reject()


def test_a_drawn_operator_is_named_by_its_file_or_its_name_field(window, tmp_path, monkeypatch):
    window.new_document()
    assert window.document.operator_name == "untitled"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(tmp_path / "my_conv"), "")))
    window.commands["save"].trigger()
    assert window.document.graph.name == "my_conv" and read_document(tmp_path / "my_conv.json")["name"] == "my_conv"
    assert window.explore.current_subject().name == "my_conv"  # what jobs, results and the gallery show
    field = window.inspector.name_edit
    assert field.isVisibleTo(window.inspector) and field.text() == "my_conv"
    field.setText("pointwise_v2")
    field.setModified(True)
    field.editingFinished.emit()
    assert window.document.graph.name == "pointwise_v2" and window.isWindowModified()
    window.commands["undo"].trigger()
    assert window.document.graph.name == "my_conv"


@pytest.mark.parametrize("name", ["involution", "depthwise_separable", "mixed_conv"])
def test_graphs_open_whole(window, name):
    window.open_file(EXAMPLES / f"{name}.json")
    view, scene = window.view, window.scene
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert view.transform().m11() >= READABLE_ZOOM
    assert shown.contains(scene.nodes_rect()) and shown.contains(scene.node_item("output").sceneBoundingRect())


def test_the_start_page_lights_no_page_and_the_theme_is_kept(window, settings_path):
    window.show_start_page()
    assert not any(action.isChecked() for action in window.pages.actions.values())
    window.pages.actions["editor"].trigger()  # Editor, chosen: the canvas in the start page's place
    assert not window.on_start_page() and window.pages.actions["editor"].isChecked()
    dark = next(a for a in window.theme_actions.actions() if a.data() == "dark")
    dark.trigger()
    assert "Theme: dark (dark)" in window.statusBar().currentMessage()
    from app.gui.settings import open_settings, theme_choice

    window.settings.sync()
    assert theme_choice(open_settings(settings_path)) == "dark"
