"""The main window's size and layout between runs: the geometry and docks restored at start if
they still make sense on this screen, the Explorer page's splitters where the user left them,
and all of it saved on closing (QSettings, app.gui.settings)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication

if TYPE_CHECKING:
    from .window import MainWindow

STATE_VERSION = 2  # 2: the inspector under the palette, the canvas the window's width
DEFAULT_SIZE = QSize(1440, 900)
SCREEN_SHARE = 0.92  # of the available screen, at most, for a first start or a saved size too big
PLOT_SHARE_KEY, SIDE_SPLITTER_KEY = "explorer/plotShare", "explorer/sideSplitter"


def restore_state(window: MainWindow) -> None:
    """The last session's geometry and dock layout, if they still make sense: a layout that
    does not restore, or a window larger than this screen, gives way to the defaults."""
    settings = window.settings
    if settings is None:
        return
    geometry = settings.value("window/geometry")
    state = settings.value("window/state")
    if geometry is not None and window.restoreGeometry(geometry) and window.size() != fitting(window.size()):
        window.resize(fitting(window.size()))
    if state is not None and not window.restoreState(state, STATE_VERSION):
        settings.remove("window/state")


def keep_explorer_layout(window: MainWindow, view) -> None:
    """The Explorer page's splitters where the user left them last time (kept on closing)."""
    if window.settings is None:
        return
    share = window.settings.value(PLOT_SHARE_KEY)
    if share is not None:
        view.set_plot_share(float(share))
    side = window.settings.value(SIDE_SPLITTER_KEY)
    if side is not None and not view.side_splitter().restoreState(side):
        window.settings.remove(SIDE_SPLITTER_KEY)


def save_state(window: MainWindow) -> None:
    settings = window.settings
    if settings is None:
        return
    settings.setValue("window/geometry", window.saveGeometry())
    settings.setValue("window/state", window.saveState(STATE_VERSION))
    view = window.explore.view
    if view is not None and shiboken6.isValid(view):
        settings.setValue(PLOT_SHARE_KEY, view.plot_share)
        settings.setValue(SIDE_SPLITTER_KEY, view.side_splitter().saveState())
    settings.sync()


def fitting(size: QSize) -> QSize:
    """`size`, shrunk to fit the available screen (e.g. 1440x900 on a 1366x768 laptop)."""
    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return size
    available = screen.availableGeometry().size()
    return QSize(
        min(size.width(), int(available.width() * SCREEN_SHARE)),
        min(size.height(), int(available.height() * SCREEN_SHARE)),
    )
