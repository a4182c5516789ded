"""The Variants view: every measurement of one result's operator on its device at its sizes
(algorithm x layout x untuned / tuned / reused schedule) in one table and one bar chart,
speed-ups against TVM's default untuned schedule and PyTorch (core.store.variants).

Clicking a row selects that result in the explorer, so the plot and panel follow."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QDialog,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from core.store.variants import HEADER, Variants, read_variants

from .. import theme
from ..result_columns import EXTRA_COLORS
from .plots import ColumnAxis, plot_widget
from .record_table import list_records
from .selection import ResultSelection
from .session import ExplorerSession

TEXT_COLUMNS = {1, 2, 3}  # variant, layout, schedule: left-aligned; numbers right-aligned
HINT = (
    "Add variants with Tune… and “Compare variants” (each algorithm, untuned and tuned), "
    "or with Run ▸ Tune with Reused Schedules…"
)
ALGORITHM_COLORS = {"default": "#2563eb", "gspc": "#d97706"}  # other algorithms take spare colours
LOG_RATIO = 10  # the chart's latency axis is logarithmic when the slowest variant is this much slower
UNTUNED_ALPHA = 110  # untuned bars are paler than tuned or reused ones


class VariantsDialog(QDialog):
    def __init__(self, session: ExplorerSession, measurement_id: int, selection: ResultSelection, parent=None):
        """StoreError (a TesseraError) if `measurement_id` is not a measurement with a latency."""
        super().__init__(parent)
        self.selection = selection
        self.variants: Variants = read_variants(session.store, measurement_id)
        self.setWindowTitle(f"Variants of {self.variants.operator}")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        heading = QLabel(f"<b>{self.variants.title()}</b>")
        heading.setWordWrap(True)
        hint = QLabel(HINT)
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        self.table = self._table(measurement_id)
        self.chart = self._chart()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.chart)
        splitter.setSizes([200, 260])
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(splitter, 1)
        layout.addWidget(hint)
        self.resize(900, 560)

    def _table(self, measurement_id: int) -> QTableWidget:
        cells = self.variants.table()
        table = QTableWidget(len(cells), len(HEADER))
        table.setHorizontalHeaderLabels(HEADER)
        list_records(table)
        table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # long schedule sources: the tooltip has them
        bold = QFont(table.font())
        bold.setBold(True)
        for r, row in enumerate(cells):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setTextAlignment(
                    Qt.AlignmentFlag.AlignVCenter
                    | (Qt.AlignmentFlag.AlignLeft if c in TEXT_COLUMNS else Qt.AlignmentFlag.AlignRight)
                )
                if self.variants.rows[r].measurement_id == measurement_id:
                    item.setFont(bold)  # the result the view was opened from
                if c == HEADER.index("schedule"):
                    item.setToolTip(text)
                table.setItem(r, c, item)
        table.resizeColumnsToContents()
        table.horizontalHeader().setSectionResizeMode(HEADER.index("schedule"), QHeaderView.ResizeMode.Stretch)
        table.itemSelectionChanged.connect(self._row_selected)
        return table

    def _row_selected(self) -> None:
        rows = {i.row() for i in self.table.selectedItems()}
        if rows:
            self.selection.set([self.variants.rows[min(rows)].measurement_id])

    def _chart(self) -> pg.PlotWidget:
        """Median latency per variant as horizontal bars (fastest on top) with their spread,
        and PyTorch's latency as a dashed line; on a log axis when they span over 10x."""
        rows = self.variants.rows
        widget = plot_widget(axisItems={"bottom": ColumnAxis("bottom")})
        item = widget.getPlotItem()
        item.setLabel("bottom", "Latency (ms)")
        y = np.arange(len(rows))[::-1].astype(float)
        latency = np.array([v.latency_ms for v in rows])
        spread = np.array([v.latency_std_ms or 0.0 for v in rows])
        torch_ms = [v.torch_latency_ms for v in rows if v.torch_latency_ms]
        log = bool(latency.max() / latency.min() > LOG_RATIO)
        item.setLogMode(x=log)  # the axis writes 10^x; the bars below are drawn at log10 themselves

        def at(ms):
            return np.log10(ms) if log else np.asarray(ms, float)

        base = float(np.floor(at(min(latency.min(), *torch_ms)))) if log else 0.0
        item.addItem(
            pg.BarGraphItem(x0=base, y=y, height=0.6, width=at(latency) - base, brushes=self._brushes(), pen=None)
        )
        item.addItem(
            pg.ErrorBarItem(
                x=at(latency),
                y=y,
                left=at(latency) - at(np.maximum(latency - spread, latency * 0.01)),
                right=at(latency + spread) - at(latency),
                beam=0.2,
                pen=pg.mkPen(theme.TEXT_MUTED),
            )
        )
        if torch_ms:
            item.addItem(
                pg.InfiniteLine(
                    float(at(np.median(torch_ms))),
                    angle=90,
                    movable=False,
                    pen=pg.mkPen(theme.TEXT_MUTED, width=1.4, style=Qt.PenStyle.DashLine),
                    label="PyTorch",
                    labelOpts={"position": 0.95, "color": theme.TEXT_MUTED},
                )
            )
        item.getAxis("left").setTicks(
            [[(float(yy), f"{v.label} · {v.layout}" if v.layout else v.label) for yy, v in zip(y, rows)]]
        )
        end = float(at(max([*(latency + spread), *torch_ms])))
        item.setXRange(base, end + (end - base) * 0.08, padding=0)
        item.setYRange(-0.6, len(rows) - 0.4, padding=0)
        widget.setMouseEnabled(x=False, y=False)
        return widget

    def _brushes(self) -> list[QBrush]:
        """A colour per algorithm, paler for untuned schedules."""
        spare = sorted({v.algorithm for v in self.variants.rows} - set(ALGORITHM_COLORS))
        brushes = []
        for v in self.variants.rows:
            known = ALGORITHM_COLORS.get(v.algorithm)
            color = QColor(known or EXTRA_COLORS[spare.index(v.algorithm) % len(EXTRA_COLORS)])
            if v.schedule in ("", "untuned"):
                color.setAlpha(UNTUNED_ALPHA)
            brushes.append(QBrush(color))
        return brushes
