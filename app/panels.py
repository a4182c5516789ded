"""Docks beyond the editor and the explorer pages: the Search panel (needs the results
session), the transformation-sequence editor, the operator gallery, and the Export
action. Each dock starts hidden and is shown from the View menu (or the Run menu's
Search... action)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMessageBox

from core.ir.errors import TesseraError
from core.ir.serialize import graph_from_document, to_document
from views.document import OperatorDocument


def add_dock(window, title: str, widget, area=Qt.DockWidgetArea.RightDockWidgetArea) -> QDockWidget:
    dock = QDockWidget(title, window)
    dock.setObjectName(f"dock_{title.lower()}")
    dock.setWidget(widget)
    window.addDockWidget(area, dock)
    window.restoreDockWidget(dock)  # where the user last put it; shown on demand
    dock.hide()
    window.view_menu.addAction(dock.toggleViewAction())
    return dock


def mount_editor_panels(window) -> None:
    """The sequence editor and File > Export...; called once by the window."""
    from views.sequence_editor import SequenceEditor

    window.sequences = SequenceEditor()
    window.sequences.openOperator.connect(lambda doc: open_document(window, doc))
    window.docks["sequences"] = add_dock(window, "Sequences", window.sequences)
    export = QAction("&Export...", window)
    export.setShortcut("Ctrl+E")
    export.setStatusTip("Export the operator: PyTorch, TVMScript, library, JSON, pictures")
    export.triggered.connect(lambda: export_current(window))
    window.commands["export"] = export
    window.file_menu.insertAction(window.commands["quit"], export)
    search = QAction("&Search...", window)
    search.setStatusTip("Let a strategy propose operators into the results store")
    search.triggered.connect(lambda: show_search(window))
    window.commands["search"] = search
    window.run_menu.addSeparator()
    window.run_menu.addAction(search)


def show_search(window) -> None:
    if window.explore.ensure_session() is not None:
        window.docks["search"].show()
        window.docks["search"].raise_()


def mount_session_panels(window, session) -> None:
    """The Search panel and the gallery, once the results session exists."""
    from views.gallery import OperatorGallery
    from views.search_panel import SearchPanel

    window.search_panel = SearchPanel(session)
    window.docks["search"] = add_dock(window, "Search", window.search_panel)
    window.gallery = OperatorGallery(session.path)
    window.gallery.openRequested.connect(lambda operator_id: open_operator(window, session, operator_id))
    window.gallery.exportRequested.connect(lambda operator_id: export_stored(window, session, operator_id))
    window.docks["gallery"] = add_dock(window, "Gallery", window.gallery, Qt.DockWidgetArea.BottomDockWidgetArea)

    def refresh_gallery(*_) -> None:  # thumbnails cost time: only while the gallery is shown
        if window.docks["gallery"].isVisible():
            window.gallery.refresh()

    session.resultsReset.connect(refresh_gallery)
    session.resultsAdded.connect(refresh_gallery)
    window.docks["gallery"].visibilityChanged.connect(refresh_gallery)


def open_document(window, doc: dict) -> None:
    if not window.maybe_save():
        return
    try:
        graph = graph_from_document(doc, source="the sequence's result")
    except TesseraError as e:
        QMessageBox.critical(window, "Cannot open the operator", str(e))
        return
    window.set_document(OperatorDocument(graph, parent=window))


def open_operator(window, session, operator_id: int) -> None:
    open_document(window, session.store.operator(operator_id)["document"])


def export_current(window) -> None:
    from views.export_dialog import ExportDialog

    doc = window.document
    window.export_dialog = ExportDialog(
        document=to_document(doc.graph), name=doc.graph.name or "operator", bindings=doc.bindings, parent=window
    )
    window.export_dialog.open()


def export_stored(window, session, operator_id: int) -> None:
    from views.export_dialog import ExportDialog

    window.export_dialog = ExportDialog.of_stored(
        session.path, operator_id, session.store.operator(operator_id)["name"], parent=window
    )
    window.export_dialog.open()
