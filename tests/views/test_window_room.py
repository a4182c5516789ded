"""The window on a 1280x720 desktop: every bundled example opens whole at a readable zoom, Zoom
to Fit brings it back from wherever the user went (toolbar, Ctrl+0, View menu), and the docks
leave the canvas the room (Diagnostics as tall as its rows, Code more than three lines)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo
from PySide6.QtWidgets import QToolBar

from views.editor.canvas_items import card_font
from views.theme import RESOURCES

pytestmark = pytest.mark.gui
EXAMPLES = sorted((RESOURCES / "examples").glob("*.json"))
READABLE_PX = 9


def card_text_px(window) -> float:
    """The smallest card text on screen, in pixels (the font's pixel size times the zoom)."""
    return QFontInfo(card_font("params")).pixelSize() * window.view.transform().m11()


def every_card_shown(window) -> bool:
    view = window.view
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    return all(shown.contains(window.scene.node_item(n).sceneBoundingRect()) for n in window.document.graph.g)


@pytest.fixture
def small_window(window, qtbot):
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() == 1280)
    return window


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_opens_whole_and_readable_at_1280x720(small_window, qtbot, path):
    window = small_window
    assert window.open_file(path)
    qtbot.wait(10)
    assert every_card_shown(window), f"{path.stem} opens cut"
    assert card_text_px(window) >= READABLE_PX, f"{path.stem}: card text {card_text_px(window):.1f} px"
    fitted = window.view.transform().m11()
    for way in ("toolbar", "Ctrl+0", "View menu"):
        window.view.zoom(3.0)  # the user zooms in and scrolls away
        window.view.horizontalScrollBar().setValue(window.view.horizontalScrollBar().maximum())
        assert not every_card_shown(window)
        if way == "toolbar":
            button = window.findChild(QToolBar, "toolbar_main").widgetForAction(window.commands["zoom_fit"])
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        elif way == "Ctrl+0":
            window.view.setFocus()
            qtbot.keyClick(window.view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
        else:
            action = next(a for a in window.view_menu.actions() if a.text() == "Zoom to Fit")
            action.trigger()
        assert every_card_shown(window), f"{way} leaves {path.stem} cut"
        assert window.view.transform().m11() == pytest.approx(fitted, rel=0.05)
    window.docks["palette"].close()  # more room: Zoom to Fit uses it
    window.docks["inspector"].close()
    qtbot.wait(10)
    window.commands["zoom_fit"].trigger()
    assert every_card_shown(window) and window.view.transform().m11() >= fitted - 1e-6


def test_diagnostics_takes_its_rows_and_code_more_than_three_lines(small_window, qtbot):
    window = small_window
    window.open_file(RESOURCES / "examples" / "involution.json")
    diagnostics, code = window.docks["diagnostics"], window.docks["code"]
    qtbot.waitUntil(lambda: diagnostics.height() < 110)  # one "No problems" row, not 150 px
    canvas = window.view.viewport().height()
    assert canvas > 0.6 * window.height(), f"the canvas is {canvas} px high"
    code.raise_()
    editor = window.code.editors["pytorch"]
    qtbot.waitUntil(lambda: editor.viewport().height() > 8 * editor.fontMetrics().lineSpacing())
    diagnostics.raise_()
    qtbot.waitUntil(lambda: diagnostics.height() < 110)
