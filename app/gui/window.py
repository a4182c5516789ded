"""The main window: palette, canvas, inspector, diagnostics and code around one
operator document, with the file and edit commands, and the Explorer page (Pareto
plot, results, jobs; wired by app/gui/explore.py). It wires views together and owns
nothing of the model; the dock layout persists through QSettings."""

from __future__ import annotations

import importlib
import threading
from pathlib import Path

from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui.pages import Pages
from app.gui.panels import build_gallery, build_search, current_export, open_document
from core.analysis.summary import Summary
from core.errors import TesseraError
from core.ir.documents import document_kind
from core.ir.serialize import to_document
from resources import EXAMPLES
from views import theme
from views.editor.bindings_bar import BindingsBar
from views.editor.canvas import OperatorScene, OperatorView, canvas_actions
from views.editor.code_panel import CodePanel
from views.editor.diagnostics import DiagnosticsPanel
from views.editor.document import TEMPLATES, OperatorDocument, new_graph
from views.editor.inspector import Inspector
from views.editor.palette import PrimitivePalette
from views.editor.sequence_editor import SequenceEditor
from views.explorer.style import CHECKABLE_BUTTONS
from views.start_page import StartPage

from .explore import STATUS_TIPS, Explore
from .settings import forget_recent_files, recent_files, remember_file

STATE_VERSION = 1
FILE_FILTER = "Tessera documents: operators and sequences (*.json);;All files (*)"
DEFAULT_SIZE = QSize(1440, 900)
SCREEN_SHARE = 0.92  # of the available screen, at most, for a first start or a saved size too big
#: the smallest useful size of each editor dock (a narrower palette cuts its names, e.g. "Grou")
DOCK_MINIMUM = {"palette": (190, 0), "inspector": (240, 0), "diagnostics": (0, 90), "code": (0, 90)}
EDITOR_DOCKS = tuple(DOCK_MINIMUM)  # they show with the Editor page only
EDITOR_ACTIONS = ("delete", "select_all", "zoom_in", "zoom_out", "zoom_fit", "layout")
MEASURE_ACTIONS = ("evaluate", "tune", "transfer", "accuracy")


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None, store: str | None = None):
        """`settings` None: nothing is restored or remembered (screenshots, throw-away windows).
        `store` is the results store path for the Explorer (None: the default store, opened
        only when an Explore action needs it; a path is opened at once)."""
        super().__init__()
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.settings = settings
        self.store = store
        self.document: OperatorDocument | None = None
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
        self.editor_pages = QStackedWidget()  # the canvas, or the start page in its place
        self.editor_pages.addWidget(central)
        self.editor_pages.addWidget(self.start_page)
        self.page_stack = QStackedWidget()  # one page at a time (app.gui.pages)
        self.setCentralWidget(self.page_stack)
        self.pages = Pages(self, self.page_stack)
        self._docks_behind_start: list[str] = []  # editor docks hidden while the start page shows

        self.primitive_palette = PrimitivePalette()
        self.inspector = Inspector()
        self.diagnostics = DiagnosticsPanel()
        self.code = CodePanel()
        self.docks = {
            "palette": self._dock("Primitives", self.primitive_palette, Qt.DockWidgetArea.LeftDockWidgetArea),
            "inspector": self._dock("Inspector", self.inspector, Qt.DockWidgetArea.RightDockWidgetArea),
            "diagnostics": self._dock("Diagnostics", self.diagnostics, Qt.DockWidgetArea.BottomDockWidgetArea),
            "code": self._dock("Code", self.code, Qt.DockWidgetArea.BottomDockWidgetArea),
        }
        for key, (width, height) in DOCK_MINIMUM.items():
            self.docks[key].setMinimumSize(width, height)
        self.tabifyDockWidget(self.docks["diagnostics"], self.docks["code"])
        self.docks["diagnostics"].raise_()
        self.resizeDocks([self.docks["palette"], self.docks["inspector"]], [210, 280], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["diagnostics"]], [150], Qt.Orientation.Vertical)

        self.sequences = SequenceEditor()
        self.sequences.openOperator.connect(lambda doc: open_document(self, doc))
        self.search_panel = None  # the Search page's panel, built on first show (app.gui.panels)
        self.gallery = None  # the Gallery page, built on first show (app.gui.panels)
        self.export_dialog = None  # the export dialog while it is open
        self.commands = self._make_actions()
        self.explore = Explore(self, store)
        self._make_menus()
        self._add_pages()
        self._make_toolbar()
        self.statusBar().showMessage(STATUS_TIPS["editor"])

        self.scene.statusMessage.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.scene.selectionChanged.connect(self._selection_changed)
        self.primitive_palette.primitiveActivated.connect(self._add_at_centre)
        self.diagnostics.nodeActivated.connect(self.focus_node)
        self.diagnostics.valueChosen.connect(self._choose)
        self.bindings_bar.bindingsChanged.connect(lambda b: self.document.set_bindings(b))
        self.docks["code"].visibilityChanged.connect(self.code.set_active)
        self.start_page.templateChosen.connect(self.new_from_template)
        self.start_page.fileChosen.connect(self.open_file)
        self.start_page.openRequested.connect(self.open_dialog)

        self.resize(_fitting(DEFAULT_SIZE))
        if settings is not None:
            self._restore_state()
        self.set_document(OperatorDocument(new_graph("empty"), parent=self))
        self.show_start_page()
        if store is not None:
            self.explore.ensure_session()
        self._page_imports = threading.Thread(target=_import_pages, name="tessera page imports", daemon=True)
        self._page_imports.start()

    # layout -------------------------------------------------------------------------
    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{title.lower()}")
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(area, dock)
        return dock

    def _make_actions(self) -> dict[str, QAction]:
        def action(text, slot, shortcuts=(), icon_name=None):
            a = QAction(text, self)
            keys = [
                key
                for s in shortcuts
                for key in (
                    QKeySequence.keyBindings(s) if isinstance(s, QKeySequence.StandardKey) else [QKeySequence(s)]
                )
            ]
            a.setShortcuts(list({k.toString(): k for k in keys if not k.isEmpty()}.values()))  # each binding once
            if icon_name:
                a.setIcon(theme.icon(icon_name))
            a.triggered.connect(slot)
            return a

        K = QKeySequence.StandardKey
        actions = {
            "new": action("&New", self.new_document, [K.New], "new"),
            "open": action("&Open…", self.open_dialog, [K.Open], "open"),
            "save": action("&Save", self.save, [K.Save], "save"),
            "save_as": action("Save &As…", self.save_as, [K.SaveAs]),
            "quit": action("&Quit", self.close, [K.Quit, "Ctrl+Q"]),
            "undo": action("&Undo", lambda: self.document.editor.undo(), [K.Undo], "undo"),
            # every platform's binding: Ctrl+Shift+Z (the standard on Linux and macOS) and Ctrl+Y (Windows)
            "redo": action("&Redo", lambda: self.document.editor.redo(), [K.Redo, "Ctrl+Shift+Z", "Ctrl+Y"], "redo"),
            "start": action("&Start Page", self.show_start_page),
            "export": action("&Export…", lambda: self.open_export(current_export(self)), ["Ctrl+E"]),
            "search": action("&Search…", lambda: self.show_page("search")),
        }
        actions["new"].setStatusTip("A new operator: a 1x1 convolution to build on")
        actions["export"].setStatusTip("Export the operator: PyTorch, TVMScript, library, JSON, pictures")
        actions["search"].setStatusTip(
            "Discover operators faster than the template at equal accuracy, or let a strategy propose some"
        )
        actions.update(canvas_actions(self.view))
        for a in actions.values():
            a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        return actions

    def _make_menus(self) -> None:
        a = self.commands
        file_menu = self.file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(a["new"])
        templates = file_menu.addMenu("New from &Template")
        for key, (name, text) in TEMPLATES.items():
            template = templates.addAction(name, lambda k=key: self.new_from_template(k))
            template.setStatusTip(text)
        file_menu.addAction(a["open"])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.recent_menu.setEnabled(self.settings is not None)
        file_menu.addSeparator()
        file_menu.addActions([a["save"], a["save_as"]])
        file_menu.addSeparator()
        file_menu.addAction(a["export"])
        file_menu.addAction(a["quit"])
        edit = self.menuBar().addMenu("&Edit")
        edit.addActions([a["undo"], a["redo"]])
        edit.addSeparator()
        edit.addActions([a["delete"], a["select_all"]])
        view = self.view_menu = self.menuBar().addMenu("&View")
        self.pages_menu = view.addMenu("&Pages")
        view.addAction(a["start"])
        view.addSeparator()
        view.addActions([a["zoom_in"], a["zoom_out"], a["zoom_fit"]])
        view.addSeparator()
        view.addAction(a["layout"])
        view.addSeparator()
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())
        run = self.run_menu = self.menuBar().addMenu("&Run")
        e = self.explore.actions
        run.addActions([e["evaluate"], e["tune"], e["transfer"], e["accuracy"]])
        run.addSeparator()
        run.addActions([e["jobs"], e["workers"], e["autostart"], e["runner"], e["devices"]])
        run.addSeparator()
        run.addAction(a["search"])

    def _make_toolbar(self) -> None:
        bar = self.addToolBar("Main")
        bar.setObjectName("toolbar_main")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        groups = (("new", "open", "save"), ("undo", "redo", "delete"), ("zoom_in", "zoom_out", "zoom_fit", "layout"))
        for i, group in enumerate(groups):
            if i:
                bar.addSeparator()
            for key in group:
                bar.addAction(self.commands[key])
        bar.addSeparator()
        bar.addActions([self.explore.actions["evaluate"], self.explore.actions["tune"]])
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        bar.addWidget(spacer)
        bar.addActions(list(self.pages.actions.values()))
        bar.setStyleSheet(theme.style_sheet(CHECKABLE_BUTTONS))

    def _add_pages(self) -> None:
        """Editor, Sequences, Search, Explorer, Gallery: the order of the work, Ctrl+1 to Ctrl+5."""
        add = self.pages.add
        add(
            "editor",
            "&Editor",
            "Ctrl+1",
            "Draw and edit the operator",
            STATUS_TIPS["editor"],
            self.editor_pages,
            docks=EDITOR_DOCKS,
        )
        add("sequences", "&Sequences", "Ctrl+2", "Loop-transformation sequences on a loop nest", widget=self.sequences)
        add(
            "search",
            "Searc&h",
            "Ctrl+3",
            "Discover operators: screen, train and time a strategy's candidates, or only propose them",
            build=self._build_search,
        )
        add(
            "explorer",
            "E&xplorer",
            "Ctrl+4",
            "The Pareto plot and every result in the store",
            STATUS_TIPS["explorer"],
            build=self.explore.build_view,
        )
        add("gallery", "&Gallery", "Ctrl+5", "The store's operators as pictures", build=self._build_gallery)
        self.pages_menu.addActions(list(self.pages.actions.values()))
        self.pages.changed.connect(self._page_changed)

    def _build_search(self):
        self.search_panel = build_search(self)
        return self.search_panel

    def _build_gallery(self):
        self.gallery = build_gallery(self)
        return self.gallery

    # the window's API for its other parts (app.gui.explore, app.gui.accuracy, app.gui.panels) ---
    def add_dock(self, key: str, title: str, widget: QWidget, beside: str = "code") -> QDockWidget:
        """A dock of another part of the window: tabbed beside the dock `beside` (or where the
        user last put it), listed under View, hidden until shown."""
        dock = self._dock(title, widget, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks[beside], dock)
        self.restoreDockWidget(dock)
        dock.hide()
        self.view_menu.addAction(dock.toggleViewAction())
        self.docks[key] = dock
        return dock

    def open_export(self, dialog) -> None:
        """Show an export dialog (one at a time)."""
        self.export_dialog = dialog
        dialog.open()

    def show_page(self, key: str) -> bool:
        """'editor', 'sequences', 'search', 'explorer' or 'gallery'; False if it cannot show now."""
        return self.pages.show(key)

    def _page_changed(self, key: str) -> None:
        for name in EDITOR_ACTIONS:
            self.commands[name].setEnabled(key == "editor")

    # the document ----------------------------------------------------------------
    def set_document(self, document: OperatorDocument) -> None:
        old = self.document
        if old is not None:
            old.summaryChanged.disconnect(self._summary_changed)
            old.historyChanged.disconnect(self._history_changed)
        self.document = document
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
        if self.maybe_save():
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
            self.set_document(OperatorDocument.open(path, parent=self))
        if self.settings is not None:
            remember_file(self.settings, path)

    def open_file(self, path: str | Path) -> bool:
        """Interactive open: asks about unsaved changes, reports a bad file in a dialog."""
        if not self.maybe_save():
            return False
        try:
            self.load(path)
        except TesseraError as e:
            QMessageBox.critical(self, "Cannot open the file", str(e))
            return False
        self.statusBar().showMessage(f"Opened {path}", 5000)
        return True

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open an operator or a sequence", self._dialog_dir(), FILE_FILTER)
        if path:
            self.open_file(path)

    def save(self) -> bool:
        if self.document.path is None:
            return self.save_as()
        return self._write(self.document.path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Save operator as",
            str(Path(self._dialog_dir()) / f"{self.document.graph.name or 'operator'}.json"),
            FILE_FILTER,
        )
        if not path:
            return False
        if Path(path).suffix == "":
            path += ".json"
        return self._write(Path(path))

    def _write(self, path: Path) -> bool:
        try:
            self.document.save(path)
        except OSError as e:
            QMessageBox.critical(self, "Cannot save operator", f"{path}: {e.strerror or e}")
            return False
        if self.settings is not None:
            remember_file(self.settings, path)
        self._history_changed()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def maybe_save(self) -> bool:
        """True when it is fine to drop the current document (saved, discarded or unmodified)."""
        if not self.document.modified:
            return True
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            f"Save the changes to {self.document.display_name}?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def _dialog_dir(self) -> str:
        if self.document is not None and self.document.path is not None:
            return str(self.document.path.parent)
        return str(EXAMPLES)

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        paths = recent_files(self.settings)
        for path in paths:
            action = self.recent_menu.addAction(Path(path).name, lambda p=path: self.open_file(p))
            action.setToolTip(path)
            action.setEnabled(Path(path).exists())
        if paths:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", lambda: forget_recent_files(self.settings))
        else:
            self.recent_menu.addAction("No recent files").setEnabled(False)

    # reacting to the document -------------------------------------------------------
    def _summary_changed(self) -> None:
        summary = self.document.summary
        self.diagnostics.show_summary(summary)
        self.bindings_bar.show_summary(summary)
        count = len(summary.shapes.errors) + bool(summary.binding_error)
        self.docks["diagnostics"].setWindowTitle(f"Diagnostics ({count})" if count else "Diagnostics")
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
        why = _not_measurable(summary)
        for key in MEASURE_ACTIONS:
            action = self.explore.actions[key]
            action.setEnabled(why is None)
            action.setToolTip(action.statusTip() if why is None else f"Not yet: {why}")

    def _history_changed(self) -> None:
        self.bindings_bar.set_bindings(self.document.bindings)  # undo and redo change them too
        stack = self.document.editor.undo_stack
        self.commands["undo"].setEnabled(stack.can_undo)
        self.commands["redo"].setEnabled(stack.can_redo)
        self.commands["undo"].setText(f"&Undo {stack.undo_text}".strip())
        self.commands["redo"].setText(f"&Redo {stack.redo_text}".strip())
        self.setWindowTitle(f"{self.document.display_name}[*] — Tessera")
        self.setWindowModified(self.document.modified)
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

    # persistence ------------------------------------------------------------------
    def _restore_state(self) -> None:
        """The last session's geometry and dock layout, if they still make sense: a layout that
        does not restore, or a window larger than this screen, gives way to the defaults."""
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geometry is not None and self.restoreGeometry(geometry) and self.size() != _fitting(self.size()):
            self.resize(_fitting(self.size()))
        if state is not None and not self.restoreState(state, STATE_VERSION):
            self.settings.remove("window/state")

    def _save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState(STATE_VERSION))
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.maybe_save():
            event.ignore()
            return
        self.pages.stop_building()
        self.show_page("editor")  # the editor's docks are saved as the user left them
        self._leave_start_page()
        if self.settings is not None:
            self._save_state()
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
    for module in ("views.explorer.explorer_view", "views.search.search_panel", "views.gallery"):
        importlib.import_module(module)


def _fitting(size: QSize) -> QSize:
    """`size`, shrunk to fit the available screen (e.g. 1440x900 on a 1366x768 laptop)."""
    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return size
    available = screen.availableGeometry().size()
    return QSize(
        min(size.width(), int(available.width() * SCREEN_SHARE)),
        min(size.height(), int(available.height() * SCREEN_SHARE)),
    )


def _not_measurable(summary: Summary) -> str | None:
    """Why Evaluate and Tune cannot take the operator yet, in the window's words; None if they can."""
    errors = len(summary.shapes.errors)
    if errors:
        return f"the operator has {errors} error(s); see Diagnostics"
    if summary.shapes.constraints:
        names = ", ".join(sorted({c.var for c in summary.shapes.constraints}))
        return f"choose a value for {names} in Diagnostics"
    if summary.binding_error or summary.numeric_cost is None:
        missing = ", ".join(summary.unbound) or "the size variables"
        return f"give {missing} a value in the Bindings bar"
    return None
