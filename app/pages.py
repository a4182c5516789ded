"""The main window's pages: Editor, Sequences, Search, Explorer and Gallery, one shown at a
time in the central area (chosen from the toolbar's page buttons, the View menu or Ctrl+1..5),
so no editor squeezes another into a dock.

A page may be built the first time it is shown (the ones that need the results store), and
may own docks that show only with it (the editor's palette, inspector, diagnostics and code):
leaving the page hides them, coming back restores the ones the user had open."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QStackedWidget, QWidget


@dataclass
class Page:
    key: str
    action: QAction
    status: str  # what the status bar says on arrival
    widget: QWidget | None = None
    build: Callable[[], QWidget | None] | None = None  # builds the widget on first show; None: cannot now
    docks: tuple[str, ...] = ()  # keys of window.docks that belong to this page
    hidden_docks: list[str] = field(default_factory=list)  # its docks that were open when it was left


class Pages(QObject):
    changed = Signal(str)  # the key of the page now shown

    def __init__(self, window, stack: QStackedWidget):
        super().__init__(window)
        self.window = window
        self.stack = stack
        self.pages: dict[str, Page] = {}
        self.current = ""
        self._group = QActionGroup(self)

    def add(
        self,
        key: str,
        title: str,
        shortcut: str,
        tip: str,
        status: str = "",
        widget: QWidget | None = None,
        build: Callable[[], QWidget | None] | None = None,
        docks: tuple[str, ...] = (),
    ) -> QAction:
        """Register a page; returns its action (checkable, in the pages' exclusive group)."""
        action = QAction(title, self.window)
        action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(f"{title.replace('&', '')} ({shortcut}): {tip}")
        action.setStatusTip(tip)
        action.setCheckable(True)
        action.triggered.connect(lambda: self.show(key))
        self._group.addAction(action)
        if widget is not None:
            self.stack.addWidget(widget)
        self.pages[key] = Page(key, action, status or tip, widget, build, docks)
        if not self.current:
            self.current = key
            action.setChecked(True)
        return action

    @property
    def actions(self) -> dict[str, QAction]:
        return {key: page.action for key, page in self.pages.items()}

    def widget(self, key: str) -> QWidget | None:
        return self.pages[key].widget

    def show(self, key: str) -> bool:
        """Show page `key` (building it first if needed); False if it cannot be built now."""
        page = self.pages[key]
        if page.widget is None and page.build is not None:
            page.widget = page.build()
            if page.widget is not None:
                self.stack.addWidget(page.widget)
        if page.widget is None:
            self.pages[self.current].action.setChecked(True)
            return False
        if key != self.current:
            self._leave(self.pages[self.current])
            for dock in page.hidden_docks:
                self.window.docks[dock].show()
            page.hidden_docks = []
            self.current = key
        self.stack.setCurrentWidget(page.widget)
        page.action.setChecked(True)
        self.window.statusBar().showMessage(page.status)
        self.changed.emit(key)
        return True

    def _leave(self, page: Page) -> None:
        page.hidden_docks = [key for key in page.docks if not self.window.docks[key].isHidden()]
        for key in page.hidden_docks:
            self.window.docks[key].hide()
