"""An 800x500 window: no page makes it grow, no toolbar hides its buttons in an overflow popup
that would stay open over a page's controls, and the canvas keeps a usable size."""

from __future__ import annotations

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolBar, QToolButton

from views.theme import RESOURCES

from .test_explorer import add_results, random_values

pytestmark = pytest.mark.gui
SIZE = (800, 500)


def overflowing(window) -> list[str]:
    """Toolbars whose overflow (extension) button shows: some of their buttons are hidden."""
    return [
        bar.objectName()
        for bar in window.findChildren(QToolBar)
        for button in bar.findChildren(QToolButton, "qt_toolbar_ext_button")
        if button.isVisible()
    ]


def test_no_page_grows_a_small_window_and_nothing_overflows(qtbot, store_path, tmp_path, dialogs, monkeypatch):
    from app.gui.settings import open_settings
    from app.gui.window import MainWindow

    monkeypatch.setenv("TESSERA_STORE", str(tmp_path / "default.db"))
    add_results(store_path, random_values(20))
    window = MainWindow(settings=open_settings(tmp_path / "settings.ini"), store=str(store_path))
    try:
        window.explore.actions["autostart"].setChecked(False)
        window.resize(*SIZE)
        window.show()
        qtbot.waitExposed(window)
        assert window.open_file(RESOURCES / "examples" / "involution.json")
        for page in ("editor", "sequences", "search", "explorer", "gallery", "editor"):
            assert window.show_page(page)
            qtbot.waitUntil(window.is_idle, timeout=20_000)
            if page == "explorer":
                window.explore.show_jobs()
                qtbot.wait(20)
            assert window.size().toTuple() == SIZE, f"the {page} page grew the window"
            assert not overflowing(window), f"buttons hidden in an overflow menu on the {page} page"
            assert QApplication.activePopupWidget() is None
            buttons = window.findChild(QToolBar, "toolbar_pages").actions()
            assert all(window.findChild(QToolBar, "toolbar_pages").widgetForAction(a).isVisible() for a in buttons)
        canvas = window.view.viewport()
        assert canvas.height() >= 120 and canvas.width() >= 400, f"the canvas is {canvas.width()}x{canvas.height()}"
        summary = window.bindings_bar.totals
        metrics, room = summary.fontMetrics(), summary.contentsRect().width()
        wrapped = metrics.boundingRect(0, 0, room, 1000, Qt.TextFlag.TextWordWrap, summary.text())
        lines = wrapped.height() / metrics.lineSpacing()
        assert lines < 2.5, f"the FLOPs summary takes {lines:.1f} lines"  # two at most, not five
    finally:
        if shiboken6.isValid(window):
            window.close()
