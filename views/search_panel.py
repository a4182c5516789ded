"""The Search panel: configure a strategy, start and stop a search job.

The search runs as a "search" job (core.search.driver:search_job) in a worker
process; its candidates land in the store as it goes, so they stream into the
results browser and the Pareto plot through the explorer session's polling."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.jobs.queue import DONE, FAILED, QUEUED, RUNNING
from core.search.base import SearchError
from core.search.driver import EVALUATIONS, STRATEGIES, SearchConfig

EXAMPLES = Path(__file__).resolve().parents[1] / "resources" / "examples"
STRATEGY_LABELS = {
    "random": "Random sampling with solvers (Canvas)",
    "mcts": "MCTS with canonicalization (Syno)",
    "sequences": "Transformation sequences (NAS-PTE)",
}
EVALUATION_LABELS = {"none": "FLOPs and parameters only", "fisher": "Fisher Potential", "train": "Proxy training"}


class SearchPanel(QWidget):
    searchStarted = Signal(int)  # job id

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.job_id: int | None = None
        self.strategy = QComboBox()
        for key in STRATEGIES:
            self.strategy.addItem(STRATEGY_LABELS[key], key)
        self.template = QComboBox()
        for path in sorted(EXAMPLES.glob("*.json")):
            self.template.addItem(path.stem, str(path))
        self.template.setCurrentText("conv2d")
        self.template.setToolTip("The operator the candidates replace: budgets are relative to it")
        self.flops = _ratio(1.0, "FLOPs cap relative to the template")
        self.params = _ratio(1.0, "Parameter cap relative to the template")
        self.use_params = QCheckBox("cap parameters")
        self.primitives = QSpinBox()
        self.primitives.setRange(2, 16)
        self.primitives.setValue(8)
        self.samples = QSpinBox()
        self.samples.setRange(1, 100_000)
        self.samples.setValue(50)
        self.evaluate = QComboBox()
        for key in EVALUATIONS:
            self.evaluate.addItem(EVALUATION_LABELS[key], key)
        self.measure = QCheckBox("measure every candidate with TVM (untuned)")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.start_button = QPushButton("Start search")
        self.stop_button = QPushButton("Stop")
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.status = QLabel("Candidates stream into the results browser and the Pareto plot.")
        self.status.setWordWrap(True)
        self.status.setObjectName("hint")

        form = QFormLayout()
        form.addRow("Strategy", self.strategy)
        form.addRow("Replace", self.template)
        form.addRow("FLOPs budget", self.flops)
        params = QHBoxLayout()
        params.addWidget(self.params)
        params.addWidget(self.use_params)
        form.addRow("Parameter budget", params)
        form.addRow("Max primitives", self.primitives)
        form.addRow("Candidates", self.samples)
        form.addRow("Score", self.evaluate)
        form.addRow("", self.measure)
        form.addRow("Seed", self.seed)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addStretch(1)
        session.jobsChanged.connect(self._jobs_changed)
        self._show_running(False)

    def config(self) -> dict:
        """The search settings as SearchConfig fields (validated)."""
        config = {
            "template": json.loads(Path(self.template.currentData()).read_text()),
            "strategy": self.strategy.currentData(),
            "budget_flops": self.flops.value(),
            "budget_params": self.params.value() if self.use_params.isChecked() else None,
            "max_primitives": self.primitives.value(),
            "samples": self.samples.value(),
            "evaluate": self.evaluate.currentData(),
            "seed": self.seed.value(),
            "tune_trials": 0 if self.measure.isChecked() else None,
        }
        SearchConfig.from_dict(config)
        return config

    def start(self) -> None:
        try:
            config = self.config()
        except (SearchError, OSError, ValueError) as e:
            self.status.setText(f"Cannot start: {e}")
            return
        self.job_id = self.session.queue_job("search", {"config": config})
        self.status.setText(f"Search job {self.job_id} queued")
        self._show_running(True)
        self.searchStarted.emit(self.job_id)

    def stop(self) -> None:
        if self.job_id is not None:
            self.session.cancel([self.job_id])

    def _jobs_changed(self) -> None:
        job = self.session.jobs.get(self.job_id) if self.job_id is not None else None
        if job is None:
            return
        running = job.state in (QUEUED, RUNNING)
        self._show_running(running)
        self.progress.setValue(int(1000 * (job.progress or 0)))
        if running:
            self.status.setText(job.message or f"search job {job.id} {job.state}")
        elif job.state == DONE:
            found = (job.result or {}).get("found", 0)
            self.status.setText(f"Search finished: {found} candidates")
        elif job.state == FAILED:
            self.status.setText(f"Search failed: {job.error}")
        else:
            self.status.setText(f"Search {job.state}")

    def _show_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)


def _ratio(value: float, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.01, 100.0)
    box.setDecimals(2)
    box.setSingleStep(0.1)
    box.setSuffix(" x")
    box.setValue(value)
    box.setToolTip(tip)
    return box
