"""The main window's two toolbars: its commands on the left, the page buttons on the right.
On a window too narrow for both, the page buttons go on a row of their own below the
commands, rather than into an overflow menu that stays open over the page."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QSizePolicy, QToolBar, QWidget

from views import theme
from views.explorer.style import CHECKABLE_BUTTONS

#: the main toolbar's groups of commands (keys of the window's commands), separated
COMMAND_GROUPS = (("new", "open", "save"), ("undo", "redo", "delete"), ("zoom_in", "zoom_out", "zoom_fit", "layout"))


class Toolbars:
    """The main toolbar (`main`) and the page buttons (`pages`) of `window`."""

    def __init__(
        self, window: QMainWindow, commands: dict[str, QAction], measures: list[QAction], pages: list[QAction]
    ):
        self.window = window
        self.main = _toolbar(window, "Main")
        self.main.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        for i, group in enumerate(COMMAND_GROUPS):
            if i:
                self.main.addSeparator()
            for key in group:
                self.main.addAction(commands[key])
        self.main.addSeparator()
        self.main.addActions(measures)
        self.pages = _toolbar(window, "Pages")
        spacer = QWidget()  # the page buttons on the right
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.pages.addWidget(spacer)
        self.pages.addActions(pages)
        self.restyle()
        self._apart = False

    def place(self) -> None:
        """The page buttons beside the main toolbar if both fit the window's width, else below it."""
        apart = self.main.sizeHint().width() + self.pages.sizeHint().width() > self.window.width()
        if apart != self._apart:
            self._apart = apart
            if apart:
                self.window.insertToolBarBreak(self.pages)
            else:
                self.window.removeToolBarBreak(self.pages)

    def restyle(self) -> None:
        """The checkable buttons' rule, in the colours of the scheme in use."""
        for bar in (self.main, self.pages):
            bar.setStyleSheet(theme.style_sheet(CHECKABLE_BUTTONS))


def _toolbar(window: QMainWindow, title: str) -> QToolBar:
    bar = window.addToolBar(title)
    bar.setObjectName(f"toolbar_{title.lower()}")
    bar.setMovable(False)
    return bar
