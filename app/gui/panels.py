"""Pages beyond the editor and the explorer, built on first show because they need the
results store: the Search panel and the operator gallery; and the ways an operator reaches
the editor or the export dialog from them. The window owns what these return."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from core.errors import TesseraError
from core.ir.serialize import graph_from_document, to_document
from views.editor.document import OperatorDocument

from .file_commands import maybe_save, open_export


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
    gallery.exportRequested.connect(
        lambda operator_id: open_export(window, stored_export(window, session, operator_id))
    )

    def refresh(*_) -> None:  # thumbnails cost time: only while the gallery is shown
        if window.pages.current == "gallery":
            gallery.refresh()

    session.resultsReset.connect(refresh)
    session.resultsAdded.connect(refresh)
    window.pages.changed.connect(refresh)
    return gallery


def open_document(window, doc: dict) -> None:
    if not maybe_save(window):
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
    """The export dialog for the operator of the page shown: the editor's, or the result of the
    sequence on the Sequences page (its sequence is saved with Save As)."""
    from views.export_dialog import ExportDialog

    if window.sequences_shown():
        editor = window.sequences
        document = editor.result_document()
        if document is None:
            QMessageBox.warning(
                window, "The sequence has no result", f"Nothing to export yet: {editor.why_no_result()}."
            )
            return None
        return ExportDialog(document=document, name=editor.result_name, bindings=document["bindings"], parent=window)
    doc = window.document
    return ExportDialog(document=to_document(doc.graph), name=doc.operator_name, bindings=doc.bindings, parent=window)


def stored_export(window, session, operator_id: int):
    """The export dialog for an operator of the store ("sequence" offered if one made it)."""
    from views.export_dialog import ExportDialog

    store = session.store
    return ExportDialog.of_stored(
        session.path,
        operator_id,
        store.operator(operator_id)["name"],
        parent=window,
        sequence=store.operator_sequence(operator_id) is not None,
    )
