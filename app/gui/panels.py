"""Pages beyond the editor and the explorer, built on first show because they need the
results store: the Search panel and the operator gallery; and the ways an operator reaches
the editor or the export dialog from them. The window owns what these return."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from core.errors import TesseraError
from core.ir.serialize import graph_from_document, to_document
from views.editor.document import OperatorDocument


def build_search(window):
    """The Search page, over the results store (None, after saying why, if it cannot open)."""
    from views.search.search_panel import SearchPanel

    session = window.explore.ensure_session()
    return None if session is None else SearchPanel(session)


def build_gallery(window):
    """The Gallery page: the store's operators as pictures, refreshed while it shows."""
    from views.gallery import OperatorGallery

    session = window.explore.ensure_session()
    if session is None:
        return None
    gallery = OperatorGallery(session.path)
    gallery.openRequested.connect(lambda operator_id: open_operator(window, session, operator_id))
    gallery.exportRequested.connect(lambda operator_id: window.open_export(stored_export(window, session, operator_id)))

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


def current_export(window):
    """The export dialog for the operator in the editor."""
    from views.export_dialog import ExportDialog

    doc = window.document
    return ExportDialog(
        document=to_document(doc.graph), name=doc.graph.name or "operator", bindings=doc.bindings, parent=window
    )


def stored_export(window, session, operator_id: int):
    """The export dialog for an operator of the store."""
    from views.export_dialog import ExportDialog

    return ExportDialog.of_stored(session.path, operator_id, session.store.operator(operator_id)["name"], parent=window)
