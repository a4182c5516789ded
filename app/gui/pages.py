"""The main window's pages: Editor, Sequences, Search, Explorer and Gallery, one shown at a
time in the central area (chosen from the toolbar's page buttons, the View menu or Ctrl+1..5),
so no editor squeezes another into a dock.

A page may be built the first time it is shown (the ones that need the results store), and
may own docks that show only with it (the editor's palette, inspector, diagnostics and code):
leaving the page hides them, coming back restores the ones the user had open.

A page whose build is a generator is built a piece per turn of the event loop (it yields
between pieces and returns the widget), behind a note saying what is being opened, so
building it never holds the window up longer than its largest piece."""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QFrame, QLabel, QLayout, QScrollArea, QStackedWidget, QStyle, QWidget

MIN_SCROLLED_HEIGHT = 40  # px of a scrolled area on the smallest window

#: a page's build: its widget (None: cannot now), or a generator yielding between pieces
#: (the name of the piece just built) and returning it
Pieces = Generator[str, None, "QWidget | None"]
Build = Callable[[], "QWidget | Pieces | None"]


class PageStack(QStackedWidget):
    """The stack the pages take turns in, as large as the page shown: a QStackedWidget asks for
    room enough for its largest page, so showing the Gallery once widened the window for good."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = self.layout()  # a QStackedWidget's own QStackedLayout
        if layout is not None:
            layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.currentChanged.connect(lambda _: self.updateGeometry())

    def sizeHint(self) -> QSize:
        page = self.currentWidget()
        return page.sizeHint() if page is not None else super().sizeHint()

    def minimumSizeHint(self) -> QSize:
        page = self.currentWidget()
        return page.minimumSizeHint() if page is not None else super().minimumSizeHint()


class Scrolling(QScrollArea):
    """A widget (the page stack as the window's central widget, a dock's contents) as large as
    the area, but never smaller than its minimum: what asks for more room than a small window
    has (the Explorer's plot and results want about 960 px) scrolls within it, and the window
    never grows by itself to make the room. (QScrollArea's own resizing follows a wrapped label's
    height-for-width, which made the pages taller than the window.)"""

    def __init__(self, widget: QWidget):
        super().__init__()
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no Tab stop of its own: its contents have theirs
        self.setMinimumHeight(MIN_SCROLLED_HEIGHT)
        self.setWidget(widget)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # the contents' minimum changed
            self._fit()
        return super().event(event)

    def _fit(self) -> None:
        widget = self.widget()
        if widget is not None:
            size = self.maximumViewportSize()
            least = widget.minimumSizeHint().expandedTo(widget.minimumSize())
            wide, tall = least.width() > size.width(), least.height() > size.height()
            if wide != tall:  # a scroll bar on one side takes room from the other
                bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
                size = size - QSize(bar if tall else 0, bar if wide else 0)
            widget.resize(size.expandedTo(least))


@dataclass
class Page:
    key: str
    action: QAction
    status: str  # what the status bar says on arrival
    widget: QWidget | None = None
    build: Build | None = None  # builds the widget on first show
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
        self._group.setExclusionPolicy(QActionGroup.ExclusionPolicy.ExclusiveOptional)  # none, on the start page
        #: the page being built: the page, its build, the note shown meanwhile, the page the user came from
        self._building: tuple[Page, Pieces, QWidget, str] | None = None
        self._paused_collector = False  # a build turned the garbage collector off (and turns it on again)
        #: one piece per shot, armed again after it: everything else that fell due meanwhile
        #: (timers, paints) runs first, where a repeating timer could run two pieces back to back
        self._step = QTimer(self)
        self._step.setSingleShot(True)
        self._step.setInterval(0)
        self._step.timeout.connect(self._build_step)

    def add(
        self,
        key: str,
        title: str,
        shortcut: str,
        tip: str,
        status: str = "",
        widget: QWidget | None = None,
        build: Build | None = None,
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

    @property
    def building(self) -> bool:
        """A page is being built in pieces."""
        return self._building is not None

    def show(self, key: str) -> bool:
        """Show page `key` (building it first if needed); False if it cannot be built now."""
        page = self.pages[key]
        if self._building is not None and self._building[0] is page:
            self._arrive(page, self._building[2])
            return True
        if page.widget is None and page.build is not None:
            built = page.build()
            if isinstance(built, Generator):
                self._start_building(page, built)
                return True
            page.widget = built
            if page.widget is not None:
                self.stack.addWidget(page.widget)
        if page.widget is None:
            self.pages[self.current].action.setChecked(True)
            return False
        self._arrive(page, page.widget)
        return True

    def _arrive(self, page: Page, widget: QWidget) -> None:
        # the page left takes its docks away before the page shown arrives, and the page shown
        # is in place before its docks come back: a page beside the other's docks widens the window
        arriving = page.key != self.current
        if arriving:
            self._leave(self.pages[self.current])
        self.stack.setCurrentWidget(widget)
        if arriving:
            for dock in page.hidden_docks:
                self.window.docks[dock].show()
            page.hidden_docks = []
            self.current = page.key
        page.action.setChecked(True)
        self.window.statusBar().showMessage(page.status)
        self.changed.emit(page.key)

    def _start_building(self, page: Page, build: Pieces) -> None:
        note = QLabel(f"Opening the {page.action.text().replace('&', '')}…")
        note.setObjectName("hint")
        note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(note)
        self._building = (page, build, note, self.current)
        # A full collection that falls in a build walks everything the build made so far (66-70 ms
        # with the Explorer over 10^5 results, the longest stall of its opening): none runs until
        # the page's objects are frozen out of the collector's view (_built).
        if gc.isenabled():  # not when a build before this one paused it already
            gc.disable()
            self._paused_collector = True
        self._arrive(page, note)
        self._step.start()

    def _build_step(self) -> None:
        """One piece of the page being built; at the end (or if a piece raises) the build
        is over: the page takes the note's place, or, if it cannot be built now, the page
        the user came from shows again."""
        if self._building is None:  # stopped (the window closed) after this shot was armed
            return
        page, build, note, previous = self._building
        over = True
        try:
            next(build)
            over = False
            self._step.start()
        except StopIteration as done:
            page.widget = done.value
        finally:
            if over:
                self._built(page, note, previous)

    def _built(self, page: Page, note: QWidget, previous: str) -> None:
        self._step.stop()
        self._building = None
        if page.widget is not None:
            # The page's objects (the Explorer's: tens of thousands) live as long as the window:
            # taken out of the garbage collector's view, a full collection no longer walks them all
            # in the GUI thread (50-56 ms of CPU each time, one in a tuning job's stalls).
            gc.freeze()
            self.stack.addWidget(page.widget)
            if self.current == page.key:
                self.stack.setCurrentWidget(page.widget)
        elif self.current == page.key:
            self.show(previous)
        self.stack.removeWidget(note)
        note.deleteLater()
        self._resume_collection()

    def stop_building(self) -> None:
        """Abandon a page being built (the window is closing)."""
        if self._building is not None:
            self._step.stop()
            self._building[1].close()
            self._building = None
            self._resume_collection()

    def _resume_collection(self) -> None:
        if self._paused_collector:
            gc.enable()
            self._paused_collector = False

    def _leave(self, page: Page) -> None:
        page.hidden_docks = [key for key in page.docks if not self.window.docks[key].isHidden()]
        for key in page.hidden_docks:
            self.window.docks[key].hide()
