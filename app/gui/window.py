"""The main window: palette, canvas, inspector, diagnostics and code around one
operator document, with the file and edit commands, and the Explorer page (Pareto
plot, results, jobs; wired by app/gui/explore.py). It wires views together and owns
nothing of the model; the dock layout persists through QSettings."""

from __future__ import annotations

import importlib
import threading
from functools import partial
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from app.gui.pages import Pages, PageStack, Scrolling
from app.gui.panels import build_gallery, build_search, current_export, open_document
from app.page_table import BY_KEY, PAGES
from core.analysis.summary import Summary
from core.errors import TesseraError
from core.ir.documents import document_kind
from core.ir.serialize import to_document
from core.store.location import default_store_path
from resources import EXAMPLES
from views import theme
from views.editor.bindings_bar import BindingsBar
from views.editor.canvas import ICON_PROPERTY, OperatorScene, OperatorView, canvas_actions
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
from .settings import (
    documents_folder,
    forget_recent_files,
    last_folder,
    recent_files,
    remember_file,
    remember_folder,
)
from .theming import add_theme_menu
from .toolbars import Toolbars

STATE_VERSION = 2  # 2: the inspector under the palette, the canvas the window's width
FILE_FILTER = "Tessera documents: operators and sequences (*.json);;All files (*)"
DEFAULT_SIZE = QSize(1440, 900)
SCREEN_SHARE = 0.92  # of the available screen, at most, for a first start or a saved size too big
PLOT_SHARE_KEY, SIDE_SPLITTER_KEY = "explorer/plotShare", "explorer/sideSplitter"
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
        self.sequences.changed.connect(self._sequence_changed)
        self.search_panel = None  # the Search page's panel, built on first show (app.gui.panels)
        self.gallery = None  # the Gallery page, built on first show (app.gui.panels)
        self.export_dialog = None  # the export dialog while it is open
        self.commands = self._make_actions()
        self.explore = Explore(self, store)
        self._make_menus()
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
        self.start_page.openRequested.connect(self.open_dialog)

        self.resize(_fitting(DEFAULT_SIZE))
        if settings is not None:
            self._restore_state()
        self.set_document(OperatorDocument(new_graph("empty"), parent=self))
        self.show_start_page()
        if store is not None or (settings is not None and quit_jobs.work_waiting(default_store_path())):
            self.explore.ensure_session()  # a store named, or queued jobs to resume
        self._page_imports = threading.Thread(target=_import_pages, name="tessera page imports", daemon=True)
        self._page_imports.start()

    # layout -------------------------------------------------------------------------
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
                a.setProperty(ICON_PROPERTY, icon_name)  # drawn again in another theme
            a.triggered.connect(slot)
            return a

        K = QKeySequence.StandardKey
        actions = {
            "new": action("&New", self.new_document, [K.New], "new"),
            "open": action("&Open…", self.open_dialog, [K.Open], "open"),
            "save": action("&Save", self.save, [K.Save], "save"),
            "save_as": action("Save &As…", self.save_as, [K.SaveAs]),
            "quit": action("&Quit", self.close, [K.Quit, "Ctrl+Q"]),
            "undo": action("&Undo", self.undo, [K.Undo], "undo"),
            # every platform's binding: Ctrl+Shift+Z (the standard on Linux and macOS) and Ctrl+Y (Windows)
            "redo": action("&Redo", self.redo, [K.Redo, "Ctrl+Shift+Z", "Ctrl+Y"], "redo"),
            "start": action("&Start Page", self.show_start_page),
            "export": action("&Export…", lambda: self.open_export(current_export(self)), ["Ctrl+E"]),
            "search": action("&Search…", lambda: self.show_page("search")),
        }
        actions["new"].setStatusTip("A new operator: a 1x1 convolution to build on")
        actions["export"].setStatusTip("Export the operator: PyTorch, TVMScript, library, JSON, pictures")
        actions["search"].setStatusTip(
            "Discover operators faster than the template at equal accuracy, or let a strategy propose some"
        )
        actions.update(canvas_actions(self.view, delete=self.delete_selected))
        for a in actions.values():
            a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        return actions

    def _make_menus(self) -> None:
        a = self.commands
        file_menu = self.file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(a["new"])
        templates = file_menu.addMenu("New from &Template")
        for key, (name, text) in TEMPLATES.items():
            template = templates.addAction(name, partial(self.new_from_template, key))
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
        self.theme_actions = add_theme_menu(self, view)
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

    def open_export(self, dialog) -> None:
        """Show an export dialog (one at a time; None: nothing to export, already said why)."""
        if dialog is None:
            return
        self.export_dialog = dialog
        self.watch_export(dialog)
        dialog.open()

    def watch_export(self, dialog) -> None:
        """An export dialog starts in the folder of the page's document or the one last used,
        and the status bar says what it wrote where."""
        dialog.set_directory(self._save_dir())
        dialog.exported.connect(lambda files: self._exported(dialog.format, files))

    def _exported(self, fmt: str, files: list[str]) -> None:
        if self.settings is not None and files:
            remember_folder(self.settings, Path(files[0]).parent)
        self.statusBar().showMessage(f"Exported {fmt}: wrote {', '.join(files)}", 20000)

    def show_page(self, key: str) -> bool:
        """Show a page of app.page_table by its key; False if it cannot show now."""
        return self.pages.show(key)

    def _page_changed(self, key: str) -> None:
        for name in EDITOR_ACTIONS:
            self.commands[name].setEnabled(key == "editor" or (name == "delete" and key == "sequences"))
        self._show_history()
        self._show_measurable()

    def delete_selected(self) -> None:
        """Delete (the key and the trash button) acts on the page shown: the selected sequence
        step on the Sequences page, the selected nodes and wires on the Editor."""
        if self.sequences_shown():
            self.sequences.remove_step()
        else:
            self.scene.delete_selection()

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
        if not (self.maybe_save_sequence() if kind == "sequence" else self.maybe_save()):
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
        """Save the document of the page shown: the sequence on the Sequences page, else the operator."""
        path = self.sequences.path if self.sequences_shown() else self.document.path
        return self._write(path) if path is not None else self.save_as()

    def save_as(self) -> bool:
        sequence = self.sequences_shown()
        name = self.sequences.result_name if sequence else self.document.operator_name
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Save sequence as" if sequence else "Save operator as",
            str(Path(self._save_dir()) / f"{name}.json"),
            FILE_FILTER,
        )
        if not path:
            return False
        if Path(path).suffix == "":
            path += ".json"
        return self._write(Path(path))

    def _write(self, path: Path) -> bool:
        """Write the document of the page shown to `path`."""
        sequence = self.sequences_shown()
        try:
            (self.sequences if sequence else self.document).save(path)
        except OSError as e:
            QMessageBox.critical(
                self, f"Cannot save the {'sequence' if sequence else 'operator'}", f"{path}: {e.strerror or e}"
            )
            return False
        if self.settings is not None:
            remember_file(self.settings, path)
            remember_folder(self.settings, path.parent)
        self._show_history()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def maybe_save(self) -> bool:
        """True when it is fine to drop the operator (saved, discarded or unmodified)."""
        return self._maybe_save(self.document, "editor")

    def maybe_save_sequence(self) -> bool:
        """True when it is fine to drop the sequence (saved, discarded or unmodified)."""
        return self._maybe_save(self.sequences, "sequences")

    def _maybe_save(self, document, page: str) -> bool:
        if not document.modified:
            return True
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            f"Save the changes to {document.display_name}?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            self.show_page(page)  # Save acts on the page shown
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def _dialog_dir(self) -> str:
        """Where Open starts: the current file's folder, else the last folder used, else the examples."""
        if self._document is not None and self._document.path is not None:
            return str(self._document.path.parent)
        return str(last_folder(self.settings) or EXAMPLES)

    def _save_dir(self) -> str:
        """Where Save As and Export start: the document's own folder unless it is a bundled example,
        else the folder last used, else the user's documents folder (never the bundled examples)."""
        path = self.sequences.path if self.sequences_shown() else self.document.path
        if path is not None and not path.resolve().is_relative_to(EXAMPLES.resolve()):
            return str(path.parent)
        return str(last_folder(self.settings) or documents_folder())

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        settings = self.settings
        if settings is None:  # the menu is disabled then
            return
        paths = recent_files(settings)
        for path in paths:
            action = self.recent_menu.addAction(Path(path).name, partial(self.open_file, path))
            action.setToolTip(path)
            action.setEnabled(Path(path).exists())
        if paths:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", partial(forget_recent_files, settings))
        else:
            self.recent_menu.addAction("No recent files").setEnabled(False)

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
        self._show_measurable()

    def _show_measurable(self) -> None:
        """Evaluate, Tune and Evaluate Accuracy take the operator of the page shown (the
        sequence's result on the Sequences page): enabled when it can be measured, else why not."""
        why = self.sequences.why_no_result() if self.sequences_shown() else _not_measurable(self.document.summary)
        for key in MEASURE_ACTIONS:
            action = self.explore.actions[key]
            action.setEnabled(why is None)
            action.setToolTip(action.statusTip() if why is None else f"Not yet: {why}")

    def _history_changed(self) -> None:
        self.bindings_bar.set_bindings(self.document.bindings)  # undo and redo change them too
        self._show_history()
        self.explore.operator_edited()

    def _sequence_changed(self) -> None:
        if self.sequences_shown():
            self._show_history()
            self._show_measurable()

    def _show_history(self) -> None:
        """Undo, Redo and the title follow the page shown: the sequence's on the Sequences page,
        the operator's on the Editor (the title names it on the other pages, which have no undo)."""
        if self.sequences_shown():
            history = self.sequences.history
            undo, redo = history.undo_text, history.redo_text
            name, modified = self.sequences.display_name, self.sequences.modified
        else:
            stack = self.document.editor.undo_stack
            undo, redo = (stack.undo_text, stack.redo_text) if self.pages.current == "editor" else ("", "")
            name, modified = self.document.display_name, self.document.modified
        self.commands["undo"].setEnabled(bool(undo))
        self.commands["redo"].setEnabled(bool(redo))
        self.commands["undo"].setText(f"&Undo {undo}".strip())
        self.commands["redo"].setText(f"&Redo {redo}".strip())
        self.setWindowTitle(f"{name}[*] — Tessera")
        self.setWindowModified(modified)

    def undo(self) -> None:
        if self.sequences_shown():
            self.sequences.undo()
        elif self.pages.current == "editor":
            self.document.editor.undo()

    def redo(self) -> None:
        if self.sequences_shown():
            self.sequences.redo()
        elif self.pages.current == "editor":
            self.document.editor.redo()

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
        settings = self.settings
        if settings is None:
            return
        geometry = settings.value("window/geometry")
        state = settings.value("window/state")
        if geometry is not None and self.restoreGeometry(geometry) and self.size() != _fitting(self.size()):
            self.resize(_fitting(self.size()))
        if state is not None and not self.restoreState(state, STATE_VERSION):
            settings.remove("window/state")

    def keep_explorer_layout(self, view) -> None:
        """The Explorer page's splitters where the user left them last time (kept on closing)."""
        if self.settings is None:
            return
        share = self.settings.value(PLOT_SHARE_KEY)
        if share is not None:
            view.set_plot_share(float(share))
        side = self.settings.value(SIDE_SPLITTER_KEY)
        if side is not None and not view.side_splitter().restoreState(side):
            self.settings.remove(SIDE_SPLITTER_KEY)

    def _save_state(self) -> None:
        settings = self.settings
        if settings is None:
            return
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState(STATE_VERSION))
        view = self.explore.view
        if view is not None and shiboken6.isValid(view):
            settings.setValue(PLOT_SHARE_KEY, view.plot_share)
            settings.setValue(SIDE_SPLITTER_KEY, view.side_splitter().saveState())
        settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        session = self.explore.session
        running, queued = quit_jobs.in_flight(session)
        answer = quit_jobs.ask(self, running, queued) if running or queued else None
        if answer == quit_jobs.STAY or not (self.maybe_save() and self.maybe_save_sequence()):
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
    for row in PAGES:
        if row.module:
            importlib.import_module(row.module)


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
    if summary.binding_error and not summary.unbound:  # every size has a value, and one of them does not fit
        return f"{summary.binding_error}; change the sizes in the Bindings bar or the node's parameters"
    if summary.binding_error or summary.numeric_cost is None:
        missing = ", ".join(summary.unbound) or "the size variables"
        return f"give {missing} a value in the Bindings bar"
    return None
