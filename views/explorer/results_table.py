"""The results browser: a table over the store that never loads everything.

The reader thread answers "which result ids match this filter, in this order" (one
query, in the background, when the user sorts or filters); rows are then read by id, a
page of 200 at a time, only when the view shows them, and kept in a small LRU cache.
New results are put where they sort (their keys are read, then a binary search each:
table_order.py), without resetting the view; selection is shared with the plot."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.errors import TesseraError
from core.store.arrays import isin
from core.store.query import OrderQuery, only_ids
from core.store.result_filter import ResultFilter, parse_filter
from core.store.table_order import TableOrder

from .. import theme
from ..result_columns import COLUMNS, DOUBT, TIMED, cell_text, origin_color
from .record_table import list_records
from .selection import ResultSelection
from .session import ExplorerSession

PAGE = 200  # rows read together, around the one the view asks for
CACHED_ROWS = 64 * PAGE  # formatted rows kept, by result id (inserting rows keeps them valid)
MAX_INSERT_RUNS = 200  # more separate insertions than this: reset the model instead
ARRIVALS_MS = 250  # new results are put in place in batches at most this often
NAME = [c.key for c in COLUMNS].index("operator_name")
ORIGIN = [c.key for c in COLUMNS].index("origin")
ID_ROLE = Qt.ItemDataRole.UserRole
MISSING = "—"
WRITES = ("evaluate", "tune", "rename", "delete")  # actions that write to the store (jobs, names, deletions)
ALIGNMENTS = [
    int((Qt.AlignmentFlag.AlignRight if c.numeric else Qt.AlignmentFlag.AlignLeft) | Qt.AlignmentFlag.AlignVCenter)
    for c in COLUMNS
]
ROW_HEIGHT = 24
MIN_ROWS = 2  # rows the table keeps in view however the page is squeezed (the plot comes first)
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
            removed_runs, inserted_runs, same = [], _runs(inserted), True
        else:
            kept, fresh = isin(old, ids), ~isin(ids, old)
            removed_runs, inserted_runs = _runs(np.flatnonzero(~kept)), _runs(np.flatnonzero(fresh))
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


def _runs(rows: np.ndarray) -> list[tuple[int, int]]:
    """Sorted rows -> [(start, stop)) runs of consecutive rows."""
    if not len(rows):
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [len(rows)]])
    return [(int(rows[a]), int(rows[b - 1]) + 1) for a, b in zip(starts, stops)]


class ResultsBrowser(QWidget):
    openRequested = Signal(int)  # result id
    measureRequested = Signal(object, bool)  # result ids, tune?
    compareRequested = Signal(int, int)
    variantsRequested = Signal(int)  # result id: compare its operator's variants
    exportRequested = Signal(int)  # result id: export its operator
    exportResultsRequested = Signal()  # export the store's results (CSV, Pareto plot)
    sequenceRequested = Signal(int)  # result id: open the sequence its operator was found by
    filteredChanged = Signal(object)  # result ids the filter matches (None: no filter), for the plot

    def __init__(self, session: ExplorerSession, selection: ResultSelection, parent=None):
        super().__init__(parent)
        self.session, self.selection = session, selection
        self.model = ResultsModel(session, self)
        self._only_selected: np.ndarray | None = None
        self._syncing = False

        self.filter_edit = QLineEdit()
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setPlaceholderText(
            "Filter: words, or terms such as latency<2  accuracy>=0.9  origin=baseline  name~conv  tuned=yes"
        )
        self.filter_edit.textChanged.connect(self._filter_changed)
        self.only_selected = QCheckBox("Selected only")
        self.only_selected.setToolTip("Show only the results selected on the plot")
        self.only_selected.toggled.connect(self._only_selected_toggled)
        self.count = QLabel()
        self.count.setObjectName("hint")
        self.filter_message = QLabel()  # why the filter was not applied, in view (not only a tooltip)
        self.filter_message.setObjectName("errorText")
        self.filter_message.setWordWrap(True)
        self.filter_message.hide()

        self.table = QTableView()
        self.table.setModel(self.model)
        list_records(self.table, several=True, edit=QAbstractItemView.EditTrigger.EditKeyPressed, row_height=ROW_HEIGHT)
        # a few rows stay in view when a dock (Jobs, Accuracy) takes the window's bottom: the plot gives way
        chrome = (
            self.table.horizontalHeader().sizeHint().height() + self.table.horizontalScrollBar().sizeHint().height()
        )
        self.table.setMinimumHeight(chrome + MIN_ROWS * ROW_HEIGHT + 2 * self.table.frameWidth())
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        widths = {
            "measurement_id": 60,
            "operator_name": 180,
            "origin": 130,
            "device_name": 70,
            "bindings": 220,
            "test_accuracy": 170,  # '0.951 ± 0.004 (3 seeds)'
            "test_difference": 170,  # '-0.3 [-0.9, +0.4]' under its title
            "created": 130,
        }
        metrics = header.fontMetrics()
        for i, column in enumerate(COLUMNS):
            width = widths.get(column.key, max(80, metrics.horizontalAdvance(column.title) + 30))
            doubt = metrics.horizontalAdvance(DOUBT) if column.key in TIMED else 0  # room for the mark
            self.table.setColumnWidth(i, width + doubt)
        header.setSortIndicator(0, Qt.SortOrder.DescendingOrder)
        self.table.setSortingEnabled(True)
        self.table.doubleClicked.connect(lambda index: self.openRequested.emit(self.model.id_at(index.row())))
        self.table.selectionModel().selectionChanged.connect(self._table_selection_changed)
        self.table.selectionModel().currentRowChanged.connect(self._current_row_changed)

        self.named_actions = self._make_actions()
        self._tips = {key: action.toolTip() for key, action in self.named_actions.items()}
        buttons = QHBoxLayout()
        buttons.setSpacing(6)
        self.buttons = {}
        for key in ("open", "evaluate", "tune", "compare", "variants", "export", "rename", "delete"):
            button = QPushButton(self.named_actions[key].text().replace("&", ""))
            button.setToolTip(self.named_actions[key].toolTip())
            button.clicked.connect(self.named_actions[key].trigger)
            self.buttons[key] = button
            buttons.addWidget(button)
        buttons.addStretch(1)
        export_results = QPushButton(self.named_actions["export_results"].text().replace("&", ""))
        export_results.setToolTip(self.named_actions["export_results"].toolTip())
        export_results.clicked.connect(self.named_actions["export_results"].trigger)
        buttons.addWidget(export_results)

        top = QHBoxLayout()
        top.setContentsMargins(8, 6, 8, 0)
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.only_selected)
        top.addWidget(self.count)
        buttons.setContentsMargins(8, 0, 8, 6)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(top)
        message = QHBoxLayout()
        message.setContentsMargins(8, 0, 8, 0)
        message.addWidget(self.filter_message)
        layout.addLayout(message)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)

        self.model.loadingChanged.connect(lambda _: self._update_count())
        self.model.rowsInserted.connect(self._update_count)
        self.model.rowsRemoved.connect(self._update_count)
        for signal in (self.model.loadingChanged, self.model.rowsInserted, self.model.rowsRemoved):
            signal.connect(self._emit_filtered)
        self.model.reordered.connect(lambda: self._select_rows(self.selection.ids))
        selection.changed.connect(self._selection_changed)
        session.refused.connect(self._update_actions)
        self._update_actions()

    def _make_actions(self) -> dict[str, QAction]:
        spec = {
            "open": (
                "&Open in Editor",
                "Open the selected result's operator in the editor",
                "Return",
                lambda: self._with_current(self.openRequested.emit),
            ),
            "evaluate": (
                "&Evaluate…",
                "Measure the selected results' operators again (untuned)",
                None,
                lambda: self.measureRequested.emit(self.selection.ids.copy(), False),
            ),
            "tune": (
                "&Tune…",
                "Tune and measure the selected results' operators",
                None,
                lambda: self.measureRequested.emit(self.selection.ids.copy(), True),
            ),
            "compare": (
                "&Compare",
                "Compare the two selected results side by side",
                None,
                lambda: self.compareRequested.emit(*map(int, self.selection.ids[:2])),
            ),
            "variants": (
                "&Variants",
                "Compare every measurement of the selected result's operator on its "
                "device at its sizes: algorithm, layout, untuned, tuned or reused schedule",
                None,
                lambda: self._with_current(self.variantsRequested.emit),
            ),
            "export": (
                "E&xport…",
                "Export the selected result's operator: PyTorch, TVMScript, library, JSON, pictures",
                None,
                lambda: self._with_current(self.exportRequested.emit),
            ),
            "sequence": (
                "Open &Sequence",
                "Open the transformation sequence the selected result's operator was found by in the sequence editor",
                None,
                lambda: self._with_current(self.sequenceRequested.emit),
            ),
            "export_results": (
                "Export &Results…",
                "Export every result as CSV, or the Pareto front (CSV, PNG, SVG)",
                None,
                self.exportResultsRequested.emit,
            ),
            "rename": ("&Rename…", "Rename the selected result's operator (F2)", None, self.rename_current),
            "delete": (
                "&Delete",
                "Delete the selected results from the store",
                QKeySequence.StandardKey.Delete,
                self.delete_selected,
            ),
        }
        actions = {}
        for key, (text, tip, shortcut, slot) in spec.items():
            action = QAction(text, self)
            action.setToolTip(tip)
            if shortcut is not None:
                action.setShortcut(QKeySequence(shortcut))
                action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(slot)
            self.table.addAction(action)
            actions[key] = action
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        return actions

    # -- filtering ------------------------------------------------------------------------
    def _filter_changed(self) -> None:
        try:
            where = parse_filter(self.filter_edit.text())
        except TesseraError as e:
            self._mark_filter(str(e))
            return
        self._mark_filter(None)
        if self._only_selected is not None:
            where = only_ids(where, self._only_selected.tolist())
        self.model.set_filter(where)

    def _mark_filter(self, error: str | None) -> None:
        self.filter_edit.setProperty("invalid", error is not None)
        self.filter_edit.setToolTip(error or "")
        self.filter_edit.style().polish(self.filter_edit)
        self.filter_message.setText(f"Filter not applied: {error}" if error else "")
        self.filter_message.setVisible(error is not None)
        self.filter_error = error

    def _emit_filtered(self) -> None:
        """Tell the plot which results the text filter matches, once the order is read.
        "Selected only" narrows the table, not the plot (the plot is where one selects)."""
        if self.model.loading or self._only_selected is not None:
            return
        self.filteredChanged.emit(self.model.ids if self.model.where else None)

    def _only_selected_toggled(self, on: bool) -> None:
        self._only_selected = self.selection.ids.copy() if on else None
        self._filter_changed()

    def _update_count(self) -> None:
        shown, total = self.model.rowCount(), self.session.frame.count
        text = f"{shown:,} of {total:,}" if shown != total else f"{total:,} results"
        self.count.setText(text + (" · loading…" if self.model.loading else ""))

    # -- selection ------------------------------------------------------------------------------
    def _table_selection_changed(self) -> None:
        if self._syncing:
            return
        ranges = self.table.selectionModel().selection()
        rows = np.concatenate([np.arange(r.top(), r.bottom() + 1) for r in ranges.toList()] or [np.empty(0, int)])
        current = self.table.currentIndex()
        current_id = self.model.id_at(current.row()) if current.isValid() and current.row() in rows else None
        self.selection.set(self.model.ids[rows.astype(np.intp)], source=self, current=current_id)
        self._update_actions()

    def _current_row_changed(self, current: QModelIndex, _previous) -> None:
        if not self._syncing and current.isValid() and self.model.id_at(current.row()) in self.selection.ids:
            self.selection.set_current(self.model.id_at(current.row()))

    def _selection_changed(self, source) -> None:
        if source is not self:
            if self.only_selected.isChecked():
                self._only_selected = self.selection.ids.copy()
                self._filter_changed()
            self._select_rows(self.selection.ids)
        self._update_actions()

    def _select_rows(self, ids) -> None:
        """Select the rows of `ids` (after the plot chose them, or after a reset)."""
        rows = self.model.rows_of(ids)
        chosen = QItemSelection()
        last = self.model.columnCount() - 1
        for start, stop in _runs(rows):
            chosen.select(self.model.index(start, 0), self.model.index(stop - 1, last))
        self._syncing = True
        try:
            model = self.table.selectionModel()
            model.select(chosen, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            if len(rows):
                current = (
                    self.model.rows_of([self.selection.current])[:1] if self.selection.current is not None else rows[:1]
                )
                row = int(current[0]) if len(current) else int(rows[0])
                model.setCurrentIndex(self.model.index(row, 0), QItemSelectionModel.SelectionFlag.NoUpdate)
                self.table.scrollTo(self.model.index(row, 0))
        finally:
            self._syncing = False

    def _update_actions(self) -> None:
        count = len(self.selection)
        enabled = {
            "open": count >= 1,
            "evaluate": count >= 1,
            "tune": count >= 1,
            "compare": count == 2,
            "variants": count >= 1,
            "export": count >= 1,
            "rename": count >= 1,
            "delete": count >= 1,
        }
        refusal = self.session.refusal
        for key, on in enabled.items():
            tip = self._tips[key]
            if refusal and key in WRITES:  # say why, as disabled controls do everywhere in the window
                on, tip = False, f"{tip}: not now, {refusal}"
            self.named_actions[key].setEnabled(on)
            self.buttons[key].setEnabled(on)
            self.buttons[key].setToolTip(tip)
        current = self._current_id()
        found_by_sequence = current is not None and self.session.result_sequence(current) is not None
        self.named_actions["sequence"].setEnabled(found_by_sequence)
        self.named_actions["sequence"].setToolTip(
            self._tips["sequence"] if found_by_sequence else "Only operators a sequence search found have a sequence"
        )

    def _current_id(self) -> int | None:
        """The result the one-result actions act on: the current one, else the first selected."""
        if self.selection.current is not None:
            return self.selection.current
        return int(self.selection.ids[0]) if len(self.selection) else None

    def _with_current(self, slot) -> None:
        current = self._current_id()
        if current is not None:
            slot(current)

    # -- editing --------------------------------------------------------------------------------------
    def rename_current(self) -> None:
        """Edit the operator name in place (Enter renames every result of that operator)."""
        rows = self.model.rows_of(
            [self.selection.current if self.selection.current is not None else self.selection.ids[0]]
        )
        if len(rows):
            index = self.model.index(int(rows[0]), NAME)
            self.table.setCurrentIndex(index)
            self.table.edit(index)

    def delete_selected(self) -> None:
        ids = self.selection.ids.copy()
        if not len(ids):
            return
        answer = QMessageBox.question(
            self,
            "Delete results",
            f"Delete {len(ids):,} result(s) and their tuning trials from "
            f"{self.session.path.name}? Their operators stay in the store.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.selection.discard(ids)
        try:
            self.session.delete_results(ids)
        except TesseraError as e:  # the store became unwritable meanwhile
            QMessageBox.warning(self, "Cannot delete the results", str(e))
