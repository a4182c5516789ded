"""The results table's model: a table over the store that never loads everything.

The reader thread answers "which result ids match this filter, in this order" (one
query, in the background, when the user sorts or filters); rows are then read by id, a
page of 200 at a time, only when the view shows them, and kept in a small LRU cache.
New results are put where they sort (their keys are read, then a binary search each:
core.store.table_order), without resetting the view (results_table.py shows it)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor

from core.errors import TesseraError
from core.store.arrays import isin
from core.store.query import OrderQuery
from core.store.result_filter import ResultFilter
from core.store.table_order import TableOrder

from .. import theme
from ..result_columns import COLUMNS, TIMED, cell_text, origin_color
from .session import ExplorerSession

PAGE = 200  # rows read together, around the one the view asks for
CACHED_ROWS = 64 * PAGE  # formatted rows kept, by result id (inserting rows keeps them valid)
MAX_INSERT_RUNS = 200  # more separate insertions than this: reset the model instead
ARRIVALS_MS = 250  # new results are put in place in batches at most this often
NAME = [c.key for c in COLUMNS].index("operator_name")
ORIGIN = [c.key for c in COLUMNS].index("origin")
ID_ROLE = Qt.ItemDataRole.UserRole
MISSING = "—"
ALIGNMENTS = [
    int((Qt.AlignmentFlag.AlignRight if c.numeric else Qt.AlignmentFlag.AlignLeft) | Qt.AlignmentFlag.AlignVCenter)
    for c in COLUMNS
]
MUTED = QColor(theme.TEXT_MUTED)
DOUBTFUL = QColor(theme.COLORS["warning_text"])  # timings the measurement itself says not to trust


class _Row:
    """One results row as the table shows it, formatted once when its page is read."""

    __slots__ = ("doubt", "icon", "record", "texts")

    def __init__(self, record: dict | None, origins: list[str]):
        self.record = record
        self.doubt = (record or {}).get("timing_note") or ""  # why its timings cannot be trusted
        if record is None:
            self.texts = ["(deleted)" if i == NAME else "" for i in range(len(COLUMNS))]
            self.icon = None
            return
        self.texts = [MISSING if record.get(c.key) is None else cell_text(record, c.key) for c in COLUMNS]
        self.icon = theme.dot_icon(origin_color(record["origin"] or "", origins))


class ResultsModel(QAbstractTableModel):
    loadingChanged = Signal(bool)
    reordered = Signal()  # the rows were replaced wholesale (reset), not just inserted or removed

    def __init__(self, session: ExplorerSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.order_by, self.descending = "measurement_id", True
        self.where = ResultFilter()
        self.order = TableOrder([], [], True, True)  # the rows to show, with their sort keys
        self.ids = self.order.ids  # the rows shown (equal to order.ids between changes)
        self.loading = False  # the whole order is being read
        self._asking = False  # the sort keys of new results are being read
        self._arrived: list[int] = []  # new results not in the order yet
        self._generation = 0
        self._rows: OrderedDict[int, _Row] = OrderedDict()  # by result id, oldest first
        self._lookup: tuple[np.ndarray, np.ndarray] | None = None
        self._arrivals = QTimer(self)
        self._arrivals.setSingleShot(True)
        self._arrivals.setInterval(ARRIVALS_MS)
        self._arrivals.timeout.connect(self._place_arrivals)
        session.orderReady.connect(self._order_ready)
        session.resultsReset.connect(self.refresh)
        session.resultsAdded.connect(self._results_added)
        session.resultsRemoved.connect(self._results_removed)
        self.refresh()

    # -- what to show ----------------------------------------------------------------------
    def set_filter(self, where: ResultFilter) -> None:
        self.where = where
        self.refresh()

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        self.order_by = COLUMNS[column].key
        self.descending = order == Qt.SortOrder.DescendingOrder
        self.refresh()

    @property
    def pending(self) -> bool:
        """The order is being read, or new results are waiting to be put in place."""
        return self.loading or self._asking or bool(self._arrived)

    def refresh(self) -> None:
        """Read the whole order again in the reader thread (sort, filter, reset, rename)."""
        self._arrivals.stop()
        self._arrived.clear()
        self._asking = False
        self._generation += 1
        self.session.request_order(self._generation, self._request())
        self._set_loading(True)

    def _request(self, ids=None) -> OrderQuery:
        return OrderQuery(self.where, self.order_by, self.descending, ids)

    def _set_loading(self, loading: bool) -> None:
        if loading != self.loading:
            self.loading = loading
            self.loadingChanged.emit(loading)

    def _results_added(self, added: slice) -> None:
        self._arrived += self.session.frame.ids[added].tolist()
        if not self._arrivals.isActive():
            self._arrivals.start()

    def _results_removed(self, rows) -> None:
        self._apply(self.order.removed(self.session.frame.ids[rows]))

    def _place_arrivals(self) -> None:
        """Ask for the sort keys of the new results that pass the filter (a few indexed rows)."""
        if self.loading or self._asking or not self._arrived:
            return  # asked again when the answer in flight comes back
        ids, self._arrived = tuple(self._arrived), []
        self._asking = True
        self.session.request_order(self._generation, self._request(ids))

    def _order_ready(self, generation: int, answer) -> None:
        if generation != self._generation or answer is None:
            return
        if isinstance(answer, TableOrder):
            self._rows.clear()  # a full read follows a reset or a rename: rows may read differently
            self._apply(answer)
            self._set_loading(False)
            if self.rowCount():
                top, bottom = self.index(0, 0), self.index(self.rowCount() - 1, len(COLUMNS) - 1)
                self.dataChanged.emit(top, bottom)
        else:
            self._asking = False
            self._apply(*self.order.inserted(*answer))
        if self._arrived and not self._arrivals.isActive():
            self._arrivals.start()

    def _apply(self, order: TableOrder, inserted: np.ndarray | None = None) -> None:
        """Show `order`: by removing and inserting rows when the rows kept stay in the same
        order (live updates), else by a reset. `inserted`: the rows of `order` that are new,
        when it is the current order plus those (then nothing needs comparing)."""
        old, ids = self.ids, order.ids
        self.order = order
        if inserted is not None:
            removed_runs, inserted_runs, same = [], runs_of(inserted), True
        else:
            kept, fresh = isin(old, ids), ~isin(ids, old)
            removed_runs, inserted_runs = runs_of(np.flatnonzero(~kept)), runs_of(np.flatnonzero(fresh))
            same = np.array_equal(old[kept], ids[~fresh])
        if not same or len(removed_runs) + len(inserted_runs) > MAX_INSERT_RUNS:
            self.beginResetModel()
            self.ids, self._lookup = ids, None
            self.endResetModel()
            self.reordered.emit()
            return
        for start, stop in reversed(removed_runs):
            self.beginRemoveRows(QModelIndex(), start, stop - 1)
            self.ids, self._lookup = np.delete(self.ids, np.s_[start:stop]), None
            self.endRemoveRows()
        for start, stop in inserted_runs:  # ascending: everything before `start` is in place already
            self.beginInsertRows(QModelIndex(), start, stop - 1)
            self.ids, self._lookup = np.insert(self.ids, start, ids[start:stop]), None
            self.endInsertRows()

    # -- rows --------------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.ids)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def record(self, row: int) -> dict | None:
        """The results row shown at `row` (its page is read on first use)."""
        return self._cells(row).record

    def _cells(self, row: int) -> _Row:
        result_id = int(self.ids[row])
        cells = self._rows.get(result_id)
        if cells is None:  # read the rows around it that are missing, in one query
            start = row // PAGE * PAGE
            missing = [int(i) for i in self.ids[start : start + PAGE] if int(i) not in self._rows]
            found, origins = self.session.rows(missing), self.session.frame.origins
            for i in missing:
                self._rows[i] = _Row(found.get(i), origins)
            cells = self._rows[result_id]
            while len(self._rows) > CACHED_ROWS:
                self._rows.popitem(last=False)
        return cells

    @property
    def cached_rows(self) -> int:
        """Rows held in memory (a few pages, whatever the size of the store)."""
        return len(self._rows)

    def id_at(self, row: int) -> int:
        return int(self.ids[row])

    def rows_of(self, ids) -> np.ndarray:
        """Rows (ascending) of those `ids` that the table shows."""
        if self._lookup is None:
            order = np.argsort(self.ids, kind="stable")
            self._lookup = (self.ids[order], order)
        sorted_ids, order = self._lookup
        ids = np.asarray(ids, dtype=np.int64)
        at = np.searchsorted(sorted_ids, ids)
        found = at < len(sorted_ids)
        found[found] = sorted_ids[at[found]] == ids[found]
        return np.sort(order[at[found]])

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        """Cheap: a view repaint asks for every cell and many roles, so pages keep their text."""
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells(index.row()).texts[index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return ALIGNMENTS[index.column()]
        if role == Qt.ItemDataRole.ForegroundRole:
            cells = self._cells(index.row())
            if cells.texts[index.column()] == MISSING:
                return MUTED
            return DOUBTFUL if cells.doubt and COLUMNS[index.column()].key in TIMED else None
        if role == Qt.ItemDataRole.DecorationRole:
            return self._cells(index.row()).icon if index.column() == ORIGIN else None
        if role == Qt.ItemDataRole.EditRole:
            record = self.record(index.row())
            return None if record is None else record.get(COLUMNS[index.column()].key)
        if role == Qt.ItemDataRole.ToolTipRole:
            cells = self._cells(index.row())
            tip = f"{COLUMNS[index.column()].title}: {cells.texts[index.column()]}"
            return f"{tip}\n{cells.doubt}" if cells.doubt and COLUMNS[index.column()].key in TIMED else tip
        if role == ID_ROLE:
            return self.id_at(index.row())
        return None

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        column = COLUMNS[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.title
        if role == Qt.ItemDataRole.ToolTipRole:
            better = {"min": "lower is better", "max": "higher is better"}.get(column.direction or "", "")
            return f"{column.key}{' (' + better + ')' if better else ''}"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return ALIGNMENTS[section]
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex):
        flags = super().flags(index)
        editable = index.column() == NAME and self.session.refusal is None
        return flags | Qt.ItemFlag.ItemIsEditable if editable else flags

    def setData(self, index: QModelIndex | QPersistentModelIndex, value, role=Qt.ItemDataRole.EditRole) -> bool:
        """Renaming a row renames its operator (every result of it shows the new name)."""
        record = self.record(index.row()) if index.isValid() and index.column() == NAME else None
        if record is None or role != Qt.ItemDataRole.EditRole or not str(value).strip():
            return False
        try:
            self.session.rename_operator(record["operator_id"], str(value))
        except TesseraError as e:  # the store became unwritable meanwhile
            self.session.message.emit(f"not renamed: {e}")
            return False
        self.refresh()
        return True


def runs_of(rows: np.ndarray) -> list[tuple[int, int]]:
    """Sorted rows -> [(start, stop)) runs of consecutive rows."""
    if not len(rows):
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [len(rows)]])
    return [(int(rows[a]), int(rows[b - 1]) + 1) for a, b in zip(starts, stops)]
