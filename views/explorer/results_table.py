"""The results browser: the table over the store (results_model.py reads it a page at a
time), its filter and actions; selection is shared with the plot."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
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
from core.store.query import only_ids
from core.store.result_filter import parse_filter

from ..result_columns import COLUMNS, DOUBT, TIMED
from .record_table import list_records
from .results_model import NAME, ResultsModel, runs_of
from .selection import ResultSelection
from .session import ExplorerSession

WRITES = ("evaluate", "tune", "rename", "delete")  # actions that write to the store (jobs, names, deletions)
ROW_HEIGHT = 24
MIN_ROWS = 2  # rows the table keeps in view however the page is squeezed (the plot comes first)


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
        for start, stop in runs_of(rows):
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
