"""The main window: palette, canvas, inspector, diagnostics and code around one
operator document, and the Explorer page (Pareto plot, results, jobs; wired by
app/gui/explore.py). It wires views together and owns nothing of the model. Its commands and
menus are made in menus.py, act on the page shown through file_commands.py and
page_commands.py, and its layout persists through QSettings (saved_layout.py)."""

from __future__ import annotations

import importlib
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QActionGroup, QCloseEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QMessageBox, QVBoxLayout, QWidget

from app.gui.pages import Pages, PageStack, Scrolling
from app.gui.panels import build_gallery, build_search, open_document
from app.page_table import BY_KEY, PAGES
from core.errors import TesseraError
from core.ir.documents import document_kind
from core.ir.serialize import to_document
from core.store.location import default_store_path
from resources import EXAMPLES
from views.editor.bindings_bar import BindingsBar
from views.editor.canvas import OperatorScene, OperatorView
from views.editor.code_panel import CodePanel
from views.editor.diagnostics import DiagnosticsPanel
from views.editor.document import TEMPLATES, OperatorDocument, new_graph
from views.editor.inspector import Inspector
from views.editor.opening import opening_progress
from views.editor.palette import PrimitivePalette
from views.editor.sequence_editor import SequenceEditor
from views.start_page import StartPage

from . import quit_jobs
from .docks import (
    DOCK_MINIMUM,
    EDITOR_DOCKS,
    fit_bottom_dock,
    keep_minimums,
    make_dock,
    raised,
    refit_bottom_docks,
    size_when_raised,
)
from .explore import Explore
from .file_commands import maybe_save, maybe_save_sequence, open_dialog
from .menus import make_actions, make_menus
from .page_commands import page_changed, sequence_changed, show_history, show_measurable
from .saved_layout import DEFAULT_SIZE, fitting, restore_state, save_state
from .settings import recent_files, remember_file
from .toolbars import Toolbars


class MainWindow(QMainWindow):
    # the menus app.gui.menus makes
    recent_menu: QMenu
    view_menu: QMenu
    pages_menu: QMenu
    theme_actions: QActionGroup

    def __init__(self, settings: QSettings | None = None, store: str | None = None, *, run_jobs: bool = True):
        """`settings` None: nothing is restored or remembered (screenshots, throw-away windows).
        `store` is the results store path for the Explorer (None: the default store, opened
        only when an Explore action needs it; a path is opened at once). `run_jobs` False: no
        worker starts by itself on the store's queued jobs (a screenshot only looks)."""
        super().__init__()
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.settings = settings
        self.run_jobs = run_jobs
        self.store = store
        self._document: OperatorDocument | None = None  # set_document() gives it one below
        self._shut_down = False

        self.scene = OperatorScene(self)
        self.view = OperatorView(self.scene)
        self.bindings_bar = BindingsBar(known=lambda: self.document.graph.kinds())
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bindings_bar)
        layout.addWidget(self.view, 1)
        self.start_page = StartPage(EXAMPLES)
        self.editor_pages = PageStack()  # the canvas, or the start page in its place
        self.editor_pages.addWidget(central)
        self.editor_pages.addWidget(self.start_page)
        self.page_stack = PageStack()  # one page at a time (app.gui.pages)
        self.setCentralWidget(Scrolling(self.page_stack))
        self.pages = Pages(self, self.page_stack)
        self._docks_behind_start: list[str] = []  # editor docks hidden while the start page shows

        self.primitive_palette = PrimitivePalette()
        self.inspector = Inspector()
        self.diagnostics = DiagnosticsPanel()
        self.code = CodePanel()
        self.docks = {
            "palette": make_dock(self, "Primitives", self.primitive_palette, Qt.DockWidgetArea.LeftDockWidgetArea),
            "inspector": make_dock(self, "Inspector", self.inspector, Qt.DockWidgetArea.LeftDockWidgetArea),
            "diagnostics": make_dock(self, "Diagnostics", self.diagnostics, Qt.DockWidgetArea.BottomDockWidgetArea),
            "code": make_dock(self, "Code", self.code, Qt.DockWidgetArea.BottomDockWidgetArea),
        }
        keep_minimums(self.docks)
        # the palette above the inspector, on the left: the canvas gets the window's width
        self.splitDockWidget(self.docks["palette"], self.docks["inspector"], Qt.Orientation.Vertical)
        self.tabifyDockWidget(self.docks["diagnostics"], self.docks["code"])
        self.docks["diagnostics"].raise_()
        self.resizeDocks([self.docks["palette"]], [250], Qt.Orientation.Horizontal)
        for key in ("diagnostics", "code"):
            size_when_raised(self, key)

        self.sequences = SequenceEditor()
        self.sequences.openOperator.connect(lambda doc: open_document(self, doc))
        self.sequences.changed.connect(lambda: sequence_changed(self))
        self.search_panel = None  # the Search page's panel, built on first show (app.gui.panels)
        self.gallery = None  # the Gallery page, built on first show (app.gui.panels)
        self.export_dialog = None  # the export dialog while it is open
        self.commands = make_actions(self)
        self.explore = Explore(self, store)
        make_menus(self)
        self._add_pages()
        self.toolbars = Toolbars(
            self,
            self.commands,
            [self.explore.actions["evaluate"], self.explore.actions["tune"]],
            list(self.pages.actions.values()),
        )
        self.statusBar().showMessage(BY_KEY["editor"].status)

        self.scene.statusMessage.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.scene.selectionChanged.connect(self._selection_changed)
        self.primitive_palette.primitiveActivated.connect(self._add_at_centre)
        self.diagnostics.nodeActivated.connect(self.focus_node)
        self.diagnostics.valueChosen.connect(self._choose)
        self.bindings_bar.bindingsChanged.connect(lambda b: self.document.set_bindings(b))
        self.docks["code"].visibilityChanged.connect(self.code.set_active)
        self.start_page.templateChosen.connect(self.new_from_template)
        self.start_page.fileChosen.connect(self.open_file)
        self.start_page.openRequested.connect(lambda: open_dialog(self))

        self.resize(fitting(DEFAULT_SIZE))
        if settings is not None:
            restore_state(self)
        self.set_document(OperatorDocument(new_graph("empty"), parent=self))
        self.show_start_page()
        if store is not None or (settings is not None and quit_jobs.work_waiting(default_store_path())):
            self.explore.ensure_session()  # a store named, or queued jobs to resume
        self._page_imports = threading.Thread(target=_import_pages, name="tessera page imports", daemon=True)
        self._page_imports.start()

    # layout -------------------------------------------------------------------------
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.toolbars.place()
        refit_bottom_docks(self)  # the window shares a change of its height among the docks

    def _add_pages(self) -> None:
        """The pages of app.page_table, in its order (Ctrl+1 to Ctrl+5): each one's widget, or
        its build on first show, is made here."""
        parts: dict[str, dict[str, Any]] = {
            "editor": {"widget": self.editor_pages, "docks": EDITOR_DOCKS},
            "sequences": {"widget": self.sequences},
            "search": {"build": self._build_search},
            "explorer": {"build": self.explore.build_view},
            "gallery": {"build": self._build_gallery},
        }
        if missing := {row.key for row in PAGES} ^ set(parts):
            raise RuntimeError(f"app.page_table and the window disagree on the pages {sorted(missing)}")
        for row in PAGES:
            self.pages.add(row.key, row.title, row.shortcut, row.tip, row.status, **parts[row.key])
        self.pages_menu.addActions(list(self.pages.actions.values()))
        self.pages.actions["editor"].triggered.connect(self._leave_start_page)  # Editor, chosen: the canvas
        self.pages.changed.connect(lambda key: page_changed(self, key))

    def _build_search(self):
        self.search_panel = build_search(self)
        return self.search_panel

    def _build_gallery(self):
        self.gallery = build_gallery(self)
        return self.gallery

    # the window's API for its other parts (app.gui.explore, app.gui.accuracy, app.gui.panels) ---
    def add_dock(self, key: str, title: str, widget: QWidget, beside: str = "code") -> QDockWidget:
        """A dock of another part of the window: tabbed beside the dock `beside` (or where the
        user last put it), listed under View, hidden until shown. Its contents scroll in a window
        too small for them (the job monitor's row of buttons is 660 px wide), never growing it."""
        dock = make_dock(self, title, Scrolling(widget), Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks[beside], dock)
        self.restoreDockWidget(dock)
        dock.hide()
        self.view_menu.addAction(dock.toggleViewAction())
        self.docks[key] = dock
        size_when_raised(self, key)
        return dock

    def show_page(self, key: str) -> bool:
        """Show a page of app.page_table by its key; False if it cannot show now."""
        return self.pages.show(key)

    def sequences_shown(self) -> bool:
        """The Sequences page is shown: Save, Undo, Redo, Export, Evaluate and the title act on
        its sequence, not on the operator hidden in the editor."""
        return self.pages.current == "sequences"

    # the document ----------------------------------------------------------------
    @property
    def document(self) -> OperatorDocument:
        """The operator in the editor: there is one from the end of __init__ on."""
        if self._document is None:
            raise RuntimeError("the window has no document before set_document()")
        return self._document

    def set_document(self, document: OperatorDocument) -> None:
        old = self._document
        if old is not None:
            old.summaryChanged.disconnect(self._summary_changed)
            old.historyChanged.disconnect(self._history_changed)
        self._document = document
        self.bindings_bar.set_bindings(document.bindings)
        if self.pages.pages:  # once the window is built: an opened operator shows in the editor
            self.show_page("editor")
        self._leave_start_page()
        self.scene.set_document(document)
        self.inspector.set_document(document)
        document.summaryChanged.connect(self._summary_changed)
        document.historyChanged.connect(self._history_changed)
        if old is not None:
            old.deleteLater()
        self.explore.document_replaced()
        self._summary_changed()
        self._history_changed()
        self.view.request_fit()

    def new_document(self) -> None:
        self.new_from_template("pointwise")

    def new_from_template(self, template: str) -> None:
        if maybe_save(self):
            self.set_document(OperatorDocument(new_graph(template), parent=self))
            self.statusBar().showMessage(f"New operator from the template {TEMPLATES[template][0]}", 5000)

    def show_start_page(self) -> None:
        """The start page in the canvas's place; the editor's docks (which would describe the
        empty document behind it) step aside until a document is chosen."""
        self.start_page.set_recent(recent_files(self.settings) if self.settings is not None else [])
        self.show_page("editor")
        if not self.on_start_page():
            self._docks_behind_start = [k for k in DOCK_MINIMUM if not self.docks[k].isHidden()]
            for key in self._docks_behind_start:
                self.docks[key].hide()
            self.editor_pages.setCurrentWidget(self.start_page)
        self.pages.actions["editor"].setChecked(False)  # the start page is no page of its own: none is lit

    def on_start_page(self) -> bool:
        return self.editor_pages.currentWidget() is self.start_page

    def _leave_start_page(self) -> None:
        if self.on_start_page():
            self.editor_pages.setCurrentIndex(0)
            for key in self._docks_behind_start:
                self.docks[key].show()
            self.view.setFocus()

    def load(self, path: str | Path) -> None:
        """Open `path` in this window, operator or sequence, each in its own editor; raises
        TesseraError (e.g. FormatError) if it cannot be read."""
        if document_kind(path) == "sequence":
            self.sequences.load(path)
            self.show_page("sequences")
        else:
            with opening_progress(self, path, self.scene) as opening:  # a large file: a progress dialog
                self.set_document(opening.document() if opening else OperatorDocument.open(path, parent=self))
        if self.settings is not None:
            remember_file(self.settings, path)

    def open_file(self, path: str | Path) -> bool:
        """Interactive open: asks about unsaved changes (of the sequence when `path` is a
        sequence, else of the operator), reports a bad file in a dialog."""
        try:
            kind = document_kind(path)
        except TesseraError as e:
            QMessageBox.critical(self, "Cannot open the file", str(e))
            return False
        if not (maybe_save_sequence(self) if kind == "sequence" else maybe_save(self)):
            return False
        try:
            self.load(path)
        except TesseraError as e:
            QMessageBox.critical(self, "Cannot open the file", str(e))
            return False
        self.statusBar().showMessage(f"Opened {path}", 5000)
        return True

    # reacting to the document -------------------------------------------------------
    def _summary_changed(self) -> None:
        summary = self.document.summary
        self.diagnostics.show_summary(summary)
        self.bindings_bar.show_summary(summary)
        count = summary.error_count
        self.docks["diagnostics"].setWindowTitle(f"Diagnostics ({count})" if count else "Diagnostics")
        if raised(self.docks["diagnostics"]):
            fit_bottom_dock(self, "diagnostics")
        if not summary.shapes.ok:
            self.code.request(None, {}, "The operator has errors; its code appears once it is valid.")
        elif summary.shapes.constraints:
            self.code.request(None, {}, "Choose the pending dynamic variables first (see Diagnostics).")
        elif summary.numeric_shapes is None:
            self.code.request(None, {}, "Bind every size variable in the bindings bar to generate code.")
        else:
            self.code.request(to_document(self.document.graph), summary.bindings)
        if self.inspector.node is None:
            self.inspector.refresh()
        show_measurable(self)

    def _history_changed(self) -> None:
        self.bindings_bar.set_bindings(self.document.bindings)  # undo and redo change them too
        show_history(self)
        self.explore.operator_edited()

    def _selection_changed(self) -> None:
        nodes = self.scene.selected_nodes()
        node = nodes[0] if len(nodes) == 1 else None
        if node != self.inspector.node:
            self.inspector.show_node(node)

    def _choose(self, var: str, value: str) -> None:
        try:
            self.document.editor.choose(var, value)
        except TesseraError as e:
            self.statusBar().showMessage(f"Cannot use {value} for {var}: {e}", 8000)
            return
        self.statusBar().showMessage(f"{var} = {value}", 5000)

    def focus_node(self, node: str) -> None:
        self.scene.select_node(node)
        item = self.scene.node_item(node)
        if item is not None:
            self.view.centerOn(item)

    def _add_at_centre(self, op: str) -> None:
        self.scene.add_primitive(op, self.view.mapToScene(self.view.viewport().rect().center()))

    def is_idle(self) -> bool:
        """No background work pending (used before screenshots and by tests)."""
        return (
            self.code.is_idle()
            and self.explore.is_idle()
            and not self.pages.building
            and not self._page_imports.is_alive()
        )

    # closing ----------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        session = self.explore.session
        running, queued = quit_jobs.in_flight(session)
        answer = quit_jobs.ask(self, running, queued) if running or queued else None
        if answer == quit_jobs.STAY or not (maybe_save(self) and maybe_save_sequence(self)):
            event.ignore()
            return
        if answer is not None:
            try:
                print(f"tessera: {quit_jobs.settle(session, answer)}", flush=True)
            except TesseraError as e:  # no background worker: the jobs wait, queued, for the next start
                QMessageBox.warning(self, "The jobs wait for the next start", str(e))
        self.pages.stop_building()
        self.show_page("editor")  # the editor's docks are saved as the user left them
        self._leave_start_page()
        if self.settings is not None:
            save_state(self)
        self.shutdown()
        event.accept()

    def shutdown(self) -> None:
        """Stop what runs beside the window (a page being built, a discovery run, the explorer's
        reader thread and workers, the code panel's jobs); once. Closing does it, and so does
        app.gui.main.run on every way out: a reader thread still running at exit aborts the process."""
        if self._shut_down:
            return
        self._shut_down = True
        self.pages.stop_building()
        if self.search_panel is not None:
            self.search_panel.shutdown()  # a discovery run stops before the workers do
        self.explore.shutdown()
        self.code.shutdown()
        self.scene.detach()


def _import_pages() -> None:
    """Import the pages built on first show (the explorer's plot pulls in pyqtgraph: about
    0.2 s) in the background, so the first switch to them does not stall the window."""
    for row in PAGES:
        if row.module:
            importlib.import_module(row.module)
