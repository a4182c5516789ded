"""The keyboard and the smaller things of the editors: a template's own bindings are kept, Undo
in the bindings field takes back the whole entry, Delete removes a sequence step, every Tab stop
shows its focus, the dark theme applies at once, whole sizes are saved as numbers, and the
sequence column keeps its width."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolBar

from views import theme
from views.theme import RESOURCES

from .helpers import type_bindings

pytestmark = pytest.mark.gui
EXAMPLES = RESOURCES / "examples"
SEQUENCE = EXAMPLES / "sequences" / "seq_spatial_bottleneck.json"


def test_a_template_keeps_its_own_bindings(qtbot, window):
    window.new_from_template("pointwise")
    bar = window.bindings_bar
    assert "K=3" in bar.edit.text()  # bound by the template for the KxK nodes to come
    type_bindings(qtbot, bar, "C_in=32, C_out=64, H=56, W=56, K=3")
    assert window.document.bindings["C_in"] == 32 and not bar.error.isVisible()
    type_bindings(qtbot, bar, "C_in=32, C_out=64, H=56, W=56, K=3, G=5")
    assert bar.error.isVisible() and "no variable G" in bar.error.text()  # the new name, not K


def test_undo_in_the_bindings_field_takes_back_the_whole_entry(qtbot, window):
    window.new_from_template("pointwise")
    bar = window.bindings_bar
    shown = bar.edit.text()
    bar.edit.setFocus()
    bar.edit.end(False)
    qtbot.keyClicks(bar.edit, ", G=5")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert bar.edit.text() == shown
    window.view.setFocus()  # focus leaves: nothing refused
    assert not bar.error.isVisible() and window.document.bindings["C_in"] == 64


def test_delete_and_the_trash_button_remove_the_selected_sequence_step(qtbot, window):
    window.open_file(SEQUENCE)
    assert window.pages.current == "sequences"
    steps = window.sequences.steps
    count = steps.count()
    window.sequences.select(1)
    steps.setFocus()
    qtbot.keyClick(steps, Qt.Key.Key_Delete)
    assert steps.count() == count - 1
    trash = window.findChild(QToolBar, "toolbar_main").widgetForAction(window.commands["delete"])
    assert trash.isEnabled()
    qtbot.mouseClick(trash, Qt.MouseButton.LeftButton)
    assert steps.count() == count - 2
    window.commands["undo"].trigger()
    assert steps.count() == count - 1


@pytest.mark.parametrize("page", ["editor", "sequences"])
def test_every_tab_stop_shows_its_focus(qtbot, window, page):
    window.open_file(SEQUENCE if page == "sequences" else EXAMPLES / "conv2d.json")
    window.show_page(page)
    window.activateWindow()
    seen: list = []
    for _ in range(40):
        window.focusNextChild()
        widget = QApplication.focusWidget()
        if widget is None or widget in seen:
            break
        seen.append(widget)
        if not widget.isVisible() or widget.height() == 0:
            continue
        focused = widget.grab().toImage()
        widget.clearFocus()
        plain = widget.grab().toImage()
        widget.setFocus()
        name = f"{type(widget).__name__} {widget.objectName()} {getattr(widget, 'text', lambda: '')()}"
        assert focused != plain, f"{name} shows no focus"
    assert len(seen) >= 5


def test_the_dark_theme_applies_at_once(qtbot, window):
    window.open_file(EXAMPLES / "conv2d.json")
    icon = window.commands["new"].icon().cacheKey()
    dark = next(a for a in window.theme_actions.actions() if a.data() == "dark")
    dark.trigger()
    assert theme.SCHEME == "dark" and "in use now" in window.statusBar().currentMessage()
    assert QApplication.instance().palette().window().color().name() == theme.COLORS["window"]
    assert window.commands["new"].icon().cacheKey() != icon  # drawn again in the dark scheme's colours
    corner = window.view.viewport().grab().toImage().pixelColor(2, 2)
    assert corner.name() == theme.CANVAS_BG  # the canvas, without a restart


def test_whole_sizes_are_saved_as_numbers(window, tmp_path):
    window.new_from_template("pointwise")
    window.document.editor.set_params("pointwise", groups="4")
    target = tmp_path / "grouped.json"
    window.document.save(target)
    [node] = json.loads(target.read_text())["nodes"]
    assert node["params"]["groups"] == 4 and node["params"]["out"] == "C_out"
    assert window.open_file(target) and window.document.graph.prim("pointwise").params["groups"] == "4"


def test_the_sequence_column_keeps_its_width(qtbot, window):
    window.open_file(SEQUENCE)
    editor = window.sequences
    column = editor.steps.parentWidget()
    widths = set()
    for row in range(editor.steps.count()):
        editor.select(row)
        qtbot.wait(5)
        widths.add(column.width())
    assert len(widths) == 1, f"the column's width jumps: {sorted(widths)}"


def test_no_example_speaks_to_anyone_but_its_user():
    for path in EXAMPLES.glob("*.json"):
        doc = json.loads(path.read_text())
        text = " ".join([doc.get("description", ""), *doc.get("notes", [])])
        assert "the task" not in text and "asked for this file" not in text, path.name
