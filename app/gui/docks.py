"""The main window's docks: how each is made, the least room an editor dock keeps, and the
height a bottom dock takes when its tab is raised, again whenever the window's height changes
(the canvas and the Explorer's plot keep the rest)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar, QWidget

#: the smallest useful width of each editor dock (a narrower palette cuts its names, e.g. "Grou"),
#: and the height its contents keep on a small window (they scroll below it)
DOCK_MINIMUM = {"palette": (190, 80), "inspector": (240, 60), "diagnostics": (0, 40), "code": (0, 40)}
#: the share of the window's height a bottom dock takes when its tab is raised (Diagnostics takes
#: the room its rows need): the canvas and the plot keep the rest
BOTTOM_DOCK_SHARE = {"code": 0.4, "jobs": 0.25, "accuracy": 0.25}
DOCK_TITLE_PX = 28  # a dock's title bar (style.qss pads it), until it is shown and can be measured
EDITOR_DOCKS = tuple(DOCK_MINIMUM)  # they show with the Editor page only


def make_dock(window: QMainWindow, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    """A movable, closable, floatable dock holding `widget`, added to `window` at `area`."""
    dock = QDockWidget(title, window)
    dock.setObjectName(f"dock_{title.lower()}")
    dock.setWidget(widget)
    dock.setFeatures(
        QDockWidget.DockWidgetFeature.DockWidgetMovable
        | QDockWidget.DockWidgetFeature.DockWidgetClosable
        | QDockWidget.DockWidgetFeature.DockWidgetFloatable
    )
    window.addDockWidget(area, dock)
    return dock


def keep_minimums(docks: dict[str, QDockWidget]) -> None:
    """Each editor dock's least width, and the least height of its contents (DOCK_MINIMUM)."""
    for key, (width, height) in DOCK_MINIMUM.items():
        docks[key].setMinimumWidth(width)
        docks[key].widget().setMinimumHeight(height)  # its own, not its contents' (a small window)


def size_when_raised(window, key: str) -> None:
    """Dock `key` of `window` (its `docks`), at the bottom, takes its room when its tab is raised."""

    def raised(visible: bool) -> None:
        if visible:
            fit_bottom_dock(window, key)

    window.docks[key].visibilityChanged.connect(raised)


def fit_bottom_dock(window, key: str) -> None:
    """Give the bottom dock `key` the height it needs: Diagnostics its rows (`window.diagnostics`),
    the others their share of the window. A floating dock, or one the user moved elsewhere,
    keeps its size."""
    dock = window.docks[key]
    if dock.isFloating() or window.dockWidgetArea(dock) != Qt.DockWidgetArea.BottomDockWidgetArea:
        return
    if key == "diagnostics":
        title = dock.widget().geometry().top()  # the title bar above the contents
        height = max(title, DOCK_TITLE_PX) + window.diagnostics.content_height()
    else:
        height = int(window.height() * BOTTOM_DOCK_SHARE[key])
    window.resizeDocks([dock], [height + _tab_bar_height(window, dock)], Qt.Orientation.Vertical)


def refit_bottom_docks(window) -> None:
    """The window's height changed: the raised bottom dock takes its own height again."""
    for key, dock in window.docks.items():
        if (key == "diagnostics" or key in BOTTOM_DOCK_SHARE) and raised(dock):
            fit_bottom_dock(window, key)


def raised(dock: QDockWidget) -> bool:
    """The dock is on screen: shown, and its tab the one raised (not behind another dock's)."""
    return not dock.visibleRegion().isEmpty()


def _tab_bar_height(window: QMainWindow, dock: QDockWidget) -> int:
    """The height of the tab bar below tabbed docks (part of the room resizeDocks shares out)."""
    for bar in window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
        if bar.isVisible() and any(bar.tabText(i) == dock.windowTitle() for i in range(bar.count())):
            return bar.height()
    return 0
