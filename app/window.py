"""The main window: palette, canvas, inspector, diagnostics and code around one
operator document, with the file and edit commands, and the Explorer page (Pareto
plot, results, jobs; wired by app/explore.py). It wires views together and owns
nothing of the model; the dock layout persists through QSettings."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
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

from app.panels import mount_editor_panels
from core.ir.errors import TesseraError
from core.ir.serialize import to_document
from views import theme
from views.bindings_bar import BindingsBar
from views.canvas import OperatorScene, OperatorView, canvas_actions
from views.code_panel import CodePanel
from views.diagnostics import DiagnosticsPanel
from views.document import OperatorDocument
from views.explorer.style import CHECKABLE_BUTTONS
from views.inspector import Inspector
from views.palette import PrimitivePalette

from .explore import STATUS_TIPS, Explore
from .settings import forget_recent_files, recent_files, remember_file

STATE_VERSION = 1
FILE_FILTER = "Tessera operators (*.json);;All files (*)"


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

        self.scene = OperatorScene(self)
        self.view = OperatorView(self.scene)
        self.bindings_bar = BindingsBar(known=lambda: self.document.graph.kinds())
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bindings_bar)
        layout.addWidget(self.view, 1)
        self.pages = QStackedWidget()  # the editor, then the Explorer once it is first shown
        self.pages.addWidget(central)
        self.setCentralWidget(self.pages)

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
        self.tabifyDockWidget(self.docks["diagnostics"], self.docks["code"])
        self.docks["diagnostics"].raise_()
        self.resizeDocks([self.docks["palette"], self.docks["inspector"]], [210, 280], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["diagnostics"]], [150], Qt.Orientation.Vertical)

        self.commands = self._make_actions()
        self.explore = Explore(self, store)
        self._make_menus()
        self._make_toolbar()
        mount_editor_panels(self)
        self.statusBar().showMessage(STATUS_TIPS["editor"])

        self.scene.statusMessage.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.scene.selectionChanged.connect(self._selection_changed)
        self.primitive_palette.primitiveActivated.connect(self._add_at_centre)
        self.diagnostics.nodeActivated.connect(self.focus_node)
        self.bindings_bar.bindingsChanged.connect(lambda b: self.document.set_bindings(b))
        self.docks["code"].visibilityChanged.connect(self.code.set_active)

        self.resize(1440, 900)
        if settings is not None:
            self._restore_state()
        self.set_document(OperatorDocument(parent=self))
        self.view.setFocus()
        if store is not None:
            self.explore.ensure_session()

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
            a.setShortcuts([QKeySequence(s) for s in shortcuts])
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
            "quit": action("&Quit", self.close, [K.Quit]),
            "undo": action("&Undo", lambda: self.document.editor.undo(), [K.Undo], "undo"),
            "redo": action("&Redo", lambda: self.document.editor.redo(), [K.Redo, "Ctrl+Y"], "redo"),
        }
        actions.update(canvas_actions(self.view))
        for a in actions.values():
            a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        return actions

    def _make_menus(self) -> None:
        a = self.commands
        file_menu = self.file_menu = self.menuBar().addMenu("&File")
        file_menu.addActions([a["new"], a["open"]])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.recent_menu.setEnabled(self.settings is not None)
        file_menu.addSeparator()
        file_menu.addActions([a["save"], a["save_as"]])
        file_menu.addSeparator()
        file_menu.addAction(a["quit"])
        edit = self.menuBar().addMenu("&Edit")
        edit.addActions([a["undo"], a["redo"]])
        edit.addSeparator()
        edit.addActions([a["delete"], a["select_all"]])
        view = self.view_menu = self.menuBar().addMenu("&View")
        view.addActions([self.explore.actions["editor"], self.explore.actions["explorer"]])
        view.addSeparator()
        view.addActions([a["zoom_in"], a["zoom_out"], a["zoom_fit"]])
        view.addSeparator()
        view.addAction(a["layout"])
        view.addSeparator()
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())
        run = self.run_menu = self.menuBar().addMenu("&Run")
        e = self.explore.actions
        run.addActions([e["evaluate"], e["tune"], e["transfer"]])
        run.addSeparator()
        run.addActions([e["jobs"], e["workers"], e["autostart"], e["runner"], e["devices"]])

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
        bar.addActions([self.explore.actions["editor"], self.explore.actions["explorer"]])
        bar.setStyleSheet(CHECKABLE_BUTTONS)

    # the document ----------------------------------------------------------------
    def set_document(self, document: OperatorDocument) -> None:
        old = self.document
        if old is not None:
            old.summaryChanged.disconnect(self._summary_changed)
            old.historyChanged.disconnect(self._history_changed)
        self.document = document
        self.scene.set_document(document)
        self.inspector.set_document(document)
        self.bindings_bar.set_bindings(document.bindings)
        document.summaryChanged.connect(self._summary_changed)
        document.historyChanged.connect(self._history_changed)
        if old is not None:
            old.deleteLater()
        self.explore.document_replaced()
        self._summary_changed()
        self._history_changed()
        self.view.request_fit()

    def new_document(self) -> None:
        if self.maybe_save():
            self.set_document(OperatorDocument(parent=self))

    def load(self, path: str | Path) -> None:
        """Open `path` in this window; raises TesseraError (e.g. FormatError) if it cannot be read."""
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
            QMessageBox.critical(self, "Cannot open operator", str(e))
            return False
        self.statusBar().showMessage(f"Opened {path}", 5000)
        return True

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open operator", self._dialog_dir(), FILE_FILTER)
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
        return str(theme.RESOURCES / "examples")

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

    def _history_changed(self) -> None:
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

    def focus_node(self, node: str) -> None:
        self.scene.select_node(node)
        item = self.scene.node_item(node)
        if item is not None:
            self.view.centerOn(item)

    def _add_at_centre(self, op: str) -> None:
        self.scene.add_primitive(op, self.view.mapToScene(self.view.viewport().rect().center()))

    def is_idle(self) -> bool:
        """No background work pending (used before screenshots and by tests)."""
        return self.code.is_idle() and self.explore.is_idle()

    def set_mode(self, mode: str) -> None:
        """'editor' or 'explorer' (the Pareto plot and results browser)."""
        self.explore.set_mode(mode)

    # persistence ------------------------------------------------------------------
    def _restore_state(self) -> None:
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state, STATE_VERSION)

    def _save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState(STATE_VERSION))
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.maybe_save():
            event.ignore()
            return
        self.explore.shutdown()
        if self.settings is not None:
            self._save_state()
        self.code.shutdown()
        self.scene.detach()
        event.accept()
