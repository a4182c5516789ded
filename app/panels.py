"""Pages beyond the editor and the explorer: the transformation-sequence editor, the Search
panel and the operator gallery (both need the results store, so they are built on first
show), and the Export action."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox

from core.ir.errors import TesseraError
from core.ir.serialize import graph_from_document, to_document
from views.document import OperatorDocument


def mount_editor_panels(window) -> None:
    """The sequence editor (a page of its own), File > Export... and Run > Search...; called
    once by the window."""
    from views.sequence_editor import SequenceEditor

    window.sequences = SequenceEditor()
    window.sequences.openOperator.connect(lambda doc: open_document(window, doc))
    export = QAction("&Export...", window)
    export.setShortcut("Ctrl+E")
    export.setStatusTip("Export the operator: PyTorch, TVMScript, library, JSON, pictures")
    export.triggered.connect(lambda: export_current(window))
    window.commands["export"] = export
    window.file_menu.insertAction(window.commands["quit"], export)
    search = QAction("&Search...", window)
    search.setStatusTip("Discover operators faster than the template at equal accuracy, or let a strategy propose some")
    search.triggered.connect(lambda: window.show_page("search"))
    window.commands["search"] = search
    window.run_menu.addSeparator()
    window.run_menu.addAction(search)


def build_search(window):
    """The Search page, over the results store (None, after saying why, if it cannot open)."""
    from views.search_panel import SearchPanel

    session = window.explore.ensure_session()
    if session is None:
        return None
    window.search_panel = SearchPanel(session)
    return window.search_panel


def build_gallery(window):
    """The Gallery page: the store's operators as pictures, refreshed while it shows."""
    from views.gallery import OperatorGallery

    session = window.explore.ensure_session()
    if session is None:
        return None
    gallery = window.gallery = OperatorGallery(session.path)
    gallery.openRequested.connect(lambda operator_id: open_operator(window, session, operator_id))
    gallery.exportRequested.connect(lambda operator_id: export_stored(window, session, operator_id))

    def refresh(*_) -> None:  # thumbnails cost time: only while the gallery is shown
        if window.pages.current == "gallery":
            gallery.refresh()

    session.resultsReset.connect(refresh)
    session.resultsAdded.connect(refresh)
    window.pages.changed.connect(refresh)
    return gallery


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
