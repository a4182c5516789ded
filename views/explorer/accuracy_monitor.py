"""The accuracy evaluations asked for in this window, as they run: each job's progress (the
epoch it trains, the kernels it tunes) and what it found, and the accuracy per epoch of every
training as a curve that grows epoch by epoch (a training job keeps its curve so far as its
partial result). The scores themselves land in the results like any other."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QHeaderView, QLabel, QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from core.jobs.queue import DONE, FAILED, Job

from ..result_columns import EXTRA_COLORS
from .plots import plot_widget
from .session import ExplorerSession

HEADERS = ("Operator", "Job", "State", "Progress", "Found")
WHAT = {
    "fisher": "Fisher Potential",
    "train": "proxy training",
    "test": "test accuracy over seeds",
    "e2e": "tuned end to end",
}


def found(job: Job) -> str:
    """What a finished job found, in a few words: its result's line (core.train.kinds), as the
    job monitor shows it."""
    if job.state == FAILED:
        return job.error or "failed"
    return (job.message or "") if job.state == DONE else ""


class AccuracyMonitor(QWidget):
    def __init__(self, session: ExplorerSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.items: dict[int, QTreeWidgetItem] = {}
        self.curves: dict[int, pg.PlotDataItem] = {}
        self.list = QTreeWidget()
        self.list.setHeaderLabels(HEADERS)
        self.list.setRootIsDecorated(False)
        self.list.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.list.header().setStretchLastSection(True)
        self.plot = plot_widget()
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "Epoch")
        item.setLabel("left", "Validation accuracy")
        item.addLegend(offset=(-10, 10))
        self.plot.getViewBox().setLimits(yMin=0.0, yMax=1.0, xMin=0.0)
        self.plot.setYRange(0.0, 1.0, padding=0)
        self.plot.getViewBox().enableAutoRange(y=False)
        self.hint = QLabel("Evaluate Accuracy… (Run menu, or a result's panel in the Explorer) trains operators here.")
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        splitter = QSplitter()
        splitter.addWidget(self.list)
        splitter.addWidget(self.plot)
        splitter.setSizes([560, 440])
        self.setMinimumHeight(220)  # the curve stays readable in a bottom dock
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.hint)
        layout.addWidget(splitter, 1)
        session.jobsChanged.connect(self.refresh)

    def track(self, job_ids: list[int]) -> None:
        """Follow these jobs (just queued) from now on."""
        for job_id in job_ids:
            job = self.session.queue.get(job_id)
            item = QTreeWidgetItem([job.operator_name or "", WHAT.get(job.kind, job.kind), job.state, "", ""])
            self.list.addTopLevelItem(item)
            self.items[job_id] = item
        self.hint.hide()
        self.refresh()

    def refresh(self) -> None:
        for job_id, item in self.items.items():
            job = self.session.jobs.get(job_id)
            if job is None:  # queued after the last poll: the next one brings it
                continue
            item.setText(2, job.state)
            item.setText(3, f"{job.progress or 0:.0%} {job.message or ''}".strip())
            item.setText(4, found(job))
            item.setToolTip(4, item.text(4))
            if job.kind == "train":
                self._draw_curve(job)

    def _draw_curve(self, job: Job) -> None:
        accuracies = (job.result or {}).get("accuracy_per_epoch") or []
        if not accuracies:
            return
        curve = self.curves.get(job.id)
        if curve is None:
            color = EXTRA_COLORS[len(self.curves) % len(EXTRA_COLORS)]
            curve = self.curves[job.id] = self.plot.plot(
                pen=pg.mkPen(color, width=2),
                symbol="o",
                symbolSize=7,
                symbolBrush=color,
                name=f"{job.operator_name} (job {job.id})",
            )
        curve.setData(list(range(1, len(accuracies) + 1)), accuracies)
        epochs = max((job.result or {}).get("epochs_planned") or 0, len(accuracies))
        self.plot.setXRange(0.8, epochs + 0.2, padding=0)
        step = max(1, epochs // 10)  # whole epochs on the axis
        self.plot.getAxis("bottom").setTickSpacing(step, step)
