"""Tuning convergence: the latency of every MetaSchedule trial of one tuned result against
its trial index, with the best-so-far staircase and the latency finally measured."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from core.store import MINIMIZE
from core.store.pareto import staircase

from .. import theme
from .plots import ColumnAxis, plot_widget


class ConvergencePlot(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = plot_widget(axisItems={"left": ColumnAxis("left")}, parent=self)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "Trial")
        item.setLabel("left", "Latency (ms)")
        item.setLogMode(y=True)
        self.trials = pg.PlotDataItem(
            pen=None, symbol="o", symbolSize=6, symbolPen=None, symbolBrush=pg.mkBrush(100, 116, 139, 150), name="trial"
        )
        self.best = pg.PlotDataItem(pen=pg.mkPen(theme.SELECTION, width=2), name="best so far")
        self.measured = pg.InfiniteLine(
            angle=0, movable=False, pen=pg.mkPen(theme.ACCEPT, width=1.4, style=Qt.PenStyle.DashLine)
        )
        for it in (self.trials, self.best):
            item.addItem(it)
        item.addItem(self.measured, ignoreBounds=True)
        self.note = QLabel()
        self.note.setObjectName("hint")
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setWordWrap(True)
        self.note.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 0, 0)
        layout.addWidget(self.note, 0, 0)
        self.set_trials([], None, "Select a tuned result to see its tuning trials.")

    def set_trials(self, trials: list[tuple[int, float]], measured_ms: float | None, note: str = "") -> None:
        """Show (trial index, latency ms) pairs; `note` replaces the plot when there are none."""
        index = np.array([t[0] for t in trials], dtype=float)
        latency = np.array([t[1] for t in trials], dtype=float)
        self.trials.setData(index, latency)
        self.best.setData(*staircase(index, np.minimum.accumulate(latency) if len(latency) else latency, MINIMIZE))
        if measured_ms is not None and len(trials):
            self.measured.setPos(np.log10(measured_ms))
            self.measured.show()
        else:
            self.measured.hide()
        self.plot.getPlotItem().enableAutoRange()
        self.note.setText("" if len(trials) else note)
        self.plot.setVisible(bool(len(trials)))

    @property
    def trial_count(self) -> int:
        x, _ = self.trials.getData()
        return 0 if x is None else len(x)
