"""One look and behaviour for the explorer's tables of records (results, jobs, variants,
devices): a record a row, selected whole; no grid, no row numbers, no wrapping; alternating
row colours; the last column takes the room left."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QTableView

Edit = QAbstractItemView.EditTrigger


def list_records(
    table: QTableView, several: bool = False, edit: Edit = Edit.NoEditTriggers, row_height: int | None = None
) -> None:
    """Set `table` up to list records: one selected at a time, or `several` (Shift, Ctrl);
    read-only unless `edit` says how a cell is edited; rows `row_height` pixels high if given."""
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    mode = QAbstractItemView.SelectionMode
    table.setSelectionMode(mode.ExtendedSelection if several else mode.SingleSelection)
    table.setEditTriggers(edit)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.setAlternatingRowColors(True)
    table.verticalHeader().hide()
    if row_height is not None:
        table.verticalHeader().setDefaultSectionSize(row_height)
    header = table.horizontalHeader()
    header.setStretchLastSection(True)
    header.setHighlightSections(False)
