"""The side panel: with a result selected, what it is, its numbers and how its tuning
converged; with none, the results on the Pareto front, best first, to pick from.
It follows the shared selection's current result and the plot's front."""

from __future__ import annotations

import html
import json

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.compile.remeasure import RemeasureDoubtful
from core.errors import TesseraError
from core.store.result_filter import sizes_filter
from core.train.paired import verdict

from .. import theme
from ..result_columns import BY_KEY, DOUBT, FIGURES, cell_text, origin_color
from .convergence import ConvergencePlot
from .selection import ResultSelection
from .session import ExplorerSession

ID_ROLE = Qt.ItemDataRole.UserRole


class ResultPanel(QWidget):
    openRequested = Signal(int)
    accuracyRequested = Signal(object)  # result ids: the selection, or the result shown
    filterRequested = Signal(str)  # a filter for the results browser (the front's results at one size)

    def __init__(self, session: ExplorerSession, selection: ResultSelection, parent=None):
        super().__init__(parent)
        self.session, self.selection = session, selection
        self.result_id: int | None = None
        self._front = (np.empty(0, np.int64), "latency_ms", "flops")
        self.title = QLabel()
        self.title.setObjectName("inspectorTitle")
        self.title.setWordWrap(True)
        self.pages = QStackedWidget()
        self.pages.addWidget(self._front_page())
        self.pages.addWidget(_scrolling(self._result_page()))  # tall: it scrolls on a small screen
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 8)
        layout.setSpacing(6)
        layout.addWidget(self.title)
        layout.addWidget(self.pages, 1)
        selection.currentChanged.connect(self.show_result)
        session.resultsReset.connect(lambda: self.show_result(self.result_id))
        session.operatorsRenamed.connect(lambda: self.show_result(self.result_id))
        self.show_result(None)

    # -- pages ---------------------------------------------------------------------------
    def _front_page(self) -> QWidget:
        page = QWidget()
        self.front_note = QLabel()
        self.front_note.setObjectName("inspectorDoc")
        self.front_note.setWordWrap(True)
        self.front_list = QTreeWidget()
        self.front_list.setRootIsDecorated(False)
        self.front_list.setAlternatingRowColors(True)
        self.front_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.front_list.header().setStretchLastSection(False)
        self.front_list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.front_list.itemClicked.connect(lambda item: self.selection.set([item.data(0, ID_ROLE)]))
        self.front_list.itemDoubleClicked.connect(lambda item: self.openRequested.emit(item.data(0, ID_ROLE)))
        self.sizes_note = QLabel()  # a front of results measured at different sizes says so
        self.sizes_note.setObjectName("warningText")
        self.sizes_note.setWordWrap(True)
        self.sizes_box = QComboBox()  # ... and offers to keep one size
        self.sizes_box.activated.connect(self._size_chosen)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.front_note)
        layout.addWidget(self.sizes_note)
        layout.addWidget(self.sizes_box)
        layout.addWidget(self.front_list, 1)
        return page

    def _result_page(self) -> QWidget:
        page = QWidget()
        self.subtitle = QLabel()
        self.subtitle.setObjectName("inspectorDoc")
        self.subtitle.setWordWrap(True)
        self.values: dict[str, QLabel] = {}
        self.form = form = QFormLayout()
        form.setContentsMargins(0, 4, 0, 4)
        form.setHorizontalSpacing(14)
        form.setVerticalSpacing(3)
        for key in FIGURES:
            label = QLabel()
            label.setWordWrap(True)  # a schedule that lost to TVM's default says why, at length
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.values[key] = label
            form.addRow(BY_KEY[key].title, label)
        self.report = QLabel()  # the test accuracy's verdict against the margin, in words
        self.report.setObjectName("inspectorDoc")
        self.report.setWordWrap(True)
        self.report.hide()
        self.doubt = QLabel()  # why its timings cannot be trusted, when they cannot
        self.doubt.setObjectName("warningText")
        self.doubt.setWordWrap(True)
        self.open_button = QPushButton("Open in Editor")
        self.open_button.clicked.connect(lambda: self.openRequested.emit(self.result_id))
        self.accuracy_button = QPushButton("Evaluate Accuracy…")
        self.accuracy_button.setToolTip(
            "Train the selected operators in a backbone: Fisher Potential, proxy accuracy, tuned end-to-end speedup"
        )
        self.accuracy_button.clicked.connect(self._accuracy_requested)
        self.remeasure_button = QPushButton("Measure again")  # where the result's timing is in doubt
        self.remeasure_button.setToolTip(
            "Queue the selected results whose timing is in doubt (or this one) to be measured again (run a worker)"
        )
        self.remeasure_button.clicked.connect(self.remeasure)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.accuracy_button)
        buttons.addWidget(self.remeasure_button)
        buttons.addStretch(1)
        convergence_title = QLabel("Tuning convergence")
        convergence_title.setObjectName("barLabel")
        #: the result's tuning trials, made by add_convergence (a plot: tens of ms to make)
        self.convergence: ConvergencePlot | None = None
        self._result_layout = layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.subtitle)
        layout.addLayout(form)
        layout.addWidget(self.report)
        layout.addWidget(self.doubt)
        layout.addLayout(buttons)
        layout.addSpacing(6)
        layout.addWidget(convergence_title)
        return page

    def add_convergence(self) -> ConvergencePlot:
        """The convergence plot, made now if it was not yet: the Explorer's build makes it
        a piece of its own, so that making the panel does not hold the window up as long."""
        if self.convergence is None:
            page = self._result_layout.parentWidget()
            self.convergence = ConvergencePlot(page)
            self._result_layout.addWidget(self.convergence, 1)
        return self.convergence

    # -- content -------------------------------------------------------------------------------
    def show_front(self, ids: np.ndarray, x_key: str, y_key: str) -> None:
        """The plot's front changed: list it (best x first), for when no result is selected."""
        self._front = (np.asarray(ids), x_key, y_key)
        if self.result_id is None:
            self._fill_front()

    def _fill_front(self) -> None:
        ids, x_key, y_key = self._front
        rows = self.session.rows(ids)
        x, y = BY_KEY[x_key], BY_KEY[y_key]
        self.front_list.clear()
        self.front_list.setHeaderLabels(["Operator", x.title, y.title])
        for result_id in ids.tolist():
            row = rows.get(result_id)
            if row is None:
                continue
            item = QTreeWidgetItem(
                [row["operator_name"] or f"operator {row['operator_id']}", cell_text(row, x_key), cell_text(row, y_key)]
            )
            item.setData(0, ID_ROLE, result_id)
            item.setIcon(0, theme.dot_icon(origin_color(row["origin"] or "", self.session.frame.origins)))
            item.setToolTip(0, f"{row['origin']} · {BY_KEY['bindings'].text(row['bindings'])}")
            for column in (1, 2):
                item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.front_list.addTopLevelItem(item)
        for column in (1, 2):
            self.front_list.resizeColumnToContents(column)
        self._show_sizes([json.loads(row["bindings"] or "{}") for row in rows.values()])
        self.front_note.setText(
            f"{len(ids)} result(s) on the Pareto front of {x.axis} ({'lower' if x.direction != 'max' else 'higher'}"
            f" is better) and {y.axis} ({'lower' if y.direction != 'max' else 'higher'} is better). "
            "Click one to see it; double-click to open it in the editor."
            if len(ids)
            else "No results to compare yet."
        )

    def _show_sizes(self, bindings: list[dict[str, int]]) -> None:
        """Results measured at different sizes do not compare (a 56x56 convolution is slower
        than a 16x16 one): a front that mixes them says so and offers each size as a filter.
        Sizes differ where a variable two results share has two values (one operator may not
        use K at all)."""
        values: dict[str, set[int]] = {}
        for sizes in bindings:
            for var, value in sizes.items():
                values.setdefault(var, set()).add(value)
        varying = sorted(var for var, seen in values.items() if len(seen) > 1)
        classes = sorted({tuple((var, sizes[var]) for var in varying if var in sizes) for sizes in bindings} - {()})
        mixed = len(classes) > 1
        self.sizes_note.setVisible(mixed)
        self.sizes_box.setVisible(mixed)
        if not mixed:
            return
        self.sizes_note.setText(
            f"{DOUBT.strip()} This front mixes results measured at different sizes ({', '.join(varying)}): "
            "their latencies and costs compare only at equal sizes."
        )
        self.sizes_box.clear()
        self.sizes_box.addItem("Show the results of one size…", None)
        for size_class in classes:
            self.sizes_box.addItem(", ".join(f"{var}={value}" for var, value in size_class), dict(size_class))

    def _size_chosen(self, index: int) -> None:
        if index > 0:
            self.filterRequested.emit(sizes_filter(self.sizes_box.itemData(index)))

    def show_result(self, result_id: int | None) -> None:
        self.result_id = result_id
        row = self.session.row(result_id) if result_id is not None else None
        if row is None or result_id is None:
            self.result_id = None
            self.title.setText("Pareto front")
            self.pages.setCurrentIndex(0)
            self._fill_front()
            return
        self.pages.setCurrentIndex(1)
        self.title.setText(row["operator_name"] or f"operator {row['operator_id']}")
        parts = [
            row["origin"] or "",
            row["device_name"] or "",
            BY_KEY["bindings"].text(row["bindings"]),
            f"result {result_id}" if result_id > 0 else "not measured yet",
        ]
        self.subtitle.setText(html.escape(" · ".join(p for p in parts if p)))
        for key, label in self.values.items():  # only what is known about this result
            label.setText(cell_text(row, key))
            self.form.setRowVisible(label, row[key] is not None)
        self.report.setText(report_text(row))
        self.report.setVisible(bool(self.report.text()))
        note = row["timing_note"] or ""
        self.doubt.setText(f"{DOUBT.strip()} Timings marked {DOUBT.strip()}: {note}" if note else "")
        self.doubt.setVisible(bool(note))
        self.remeasure_button.setVisible(bool(note))
        self.add_convergence().set_trials(
            self.session.trials(result_id),
            row["latency_ms"],
            "Not tuned: measured with TVM's default schedule, so there are no trials."
            if not row["tuned"]
            else "This tuning run kept no trials.",
        )

    def _accuracy_requested(self) -> None:
        if ids := self._chosen():
            self.accuracyRequested.emit(ids)

    def remeasure(self) -> None:
        """Queue the chosen results whose timing is in doubt to be measured again, as the
        Gallery's Measure again does for all (core.compile.remeasure); the doubt line says how many."""
        ids = tuple(i for i in self._chosen() if i > 0)  # measurements: an unmeasured operator has none
        if not ids:
            return
        why = self.doubt.text().split("\n")[0]
        try:
            queued = self.session.submit(RemeasureDoubtful(measurements=ids))
        except TesseraError as e:
            self.doubt.setText(f"{why}\nNot queued again: {e}")
            return
        n = len(queued.ids)
        self.doubt.setText(
            f"{why}\nQueued {n} measurement{'s' * (n != 1)} in doubt again"
            + (": a worker measures them." if n else " (already queued, or none of them is in doubt).")
        )

    def _chosen(self) -> list[int]:
        """The selected results, else the one shown."""
        if len(self.selection):
            return [int(i) for i in self.selection.ids]
        return [] if self.result_id is None else [self.result_id]


def _scrolling(page: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setWidget(page)
    return area


def report_text(row: dict) -> str:
    """How the result's test accuracy compares with the original's, in words ('' when not tested
    against it): the rule the margin is judged by, and that the accuracy above selected it."""
    if row["test_difference"] is None or row["test_margin"] is None:
        return ""
    low, high = row["test_difference_low"], row["test_difference_high"]
    judged = verdict(None if low is None else (low, high), row["test_margin"])
    return (
        f"Test split, trained again with {row['test_seeds']} seeds and paired with the original: {judged}. "
        "Accuracy above is the validation accuracy that selected it."
    )
