"""The Search page's settings. Two modes: Discover runs the discovery loop (propose, screen
with Fisher Potential, proxy-train, keep what is within the accuracy margin, time it tuned
end to end), with the proxy task, the stages, the deployment size and the time budget
settable and `tessera discover`'s defaults; Propose only runs a plain search job that fills
the store with candidates. Both share what to search: strategy, template and budgets.

The widgets only hold values: the configurations are built and checked by core
(core.search.discovery.discovery_config, core.search.driver.SearchConfig), so the window and
the command line make the same run from the same settings."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.data.datasets import DEFAULT_DATASET, check_source
from core.data.specs import BACKBONE_NAMES
from core.ir.serialize import read_document
from core.networks.settings import DEPLOY_RESOLUTION, STANDARD_WIDTH
from core.search.discovery import discovery_config
from core.search.driver import EVALUATIONS, STRATEGIES, SearchConfig

EXAMPLES = Path(__file__).resolve().parents[1] / "resources" / "examples"
DISCOVER, PROPOSE = "discover", "propose"
MODE_LABELS = {
    DISCOVER: "Discover: screen, train and time candidates (the loop)",
    PROPOSE: "Propose only: candidates into the store",
}
STRATEGY_LABELS = {
    "random": "Random sampling with solvers (Canvas)",
    "mcts": "MCTS with canonicalization (Syno)",
    "sequences": "Transformation sequences (NAS-PTE)",
}
EVALUATION_LABELS = {"none": "FLOPs and parameters only", "fisher": "Fisher Potential", "train": "Proxy training"}


class SearchSettings(QWidget):
    changed = Signal()  # any setting changed

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mode = QComboBox()
        for key, label in MODE_LABELS.items():
            self.mode.addItem(label, key)
        self.mode.setToolTip(
            "Discover runs every stage of the loop as jobs in the worker processes; "
            "Propose only lets the strategy fill the store with candidates"
        )

        # what to search ------------------------------------------------------------------------
        self.strategy = QComboBox()
        for key in STRATEGIES:
            self.strategy.addItem(STRATEGY_LABELS[key], key)
        self.strategy.setCurrentIndex(self.strategy.findData("mcts"))
        self.template = QComboBox()
        for path in sorted(EXAMPLES.glob("*.json")):
            self.template.addItem(path.stem, str(path))
        self.template.setCurrentText("conv2d")
        self.template.setToolTip("The operator the candidates replace: budgets are relative to it")
        self.flops = _number(1.0, 0.01, 100.0, " x", "FLOPs cap relative to the template")
        self.params = _number(1.0, 0.01, 100.0, " x", "Parameter cap relative to the template")
        self.use_params = QCheckBox("cap parameters")
        self.primitives = _whole(8, 2, 16, "The most primitives a candidate may have")
        self.seed = _whole(0, 0, 2**31 - 1, "Seeds the strategy, the data split and the initial weights")
        params = QHBoxLayout()
        params.addWidget(self.params)
        params.addWidget(self.use_params)
        search_box, search = _group("What to search")
        search.addRow("Strategy", self.strategy)
        search.addRow("Replace", self.template)
        search.addRow("FLOPs budget", self.flops)
        search.addRow("Parameter budget", params)
        search.addRow("Max primitives", self.primitives)
        search.addRow("Seed", self.seed)

        # the proxy task ------------------------------------------------------------------------
        self.backbone = QComboBox()
        self.backbone.addItems(BACKBONE_NAMES)
        self.backbone.setToolTip("The network every candidate is trained in (its convolutions replaced)")
        self.dataset = QComboBox()
        self.dataset.setEditable(True)
        self.dataset.addItem(DEFAULT_DATASET)
        self.dataset.setToolTip(
            "'digits' (bundled) or a path: a CIFAR binary folder, an .npz archive or an image folder"
        )
        browse = QToolButton()
        browse.setText("…")
        browse.setToolTip("Choose a dataset folder (CIFAR binary files or one folder per class)")
        browse.clicked.connect(self._browse_dataset)
        dataset = QHBoxLayout()
        dataset.addWidget(self.dataset, 1)
        dataset.addWidget(browse)
        self.width = _whole(16, 1, 1024, "Channels of the backbone's first stage while training")
        self.resolution = _whole(16, 8, 512, "Image size while training (pixels)", " px")
        self.epochs = _whole(5, 1, 1000, "Training epochs per candidate (early-stopped against the best curve)")
        self.limit = _whole(0, 0, 10_000_000, "Train on a stratified sample of this many examples", special="all")
        self.batches = _whole(0, 0, 1_000_000, "Batches per epoch at most", special="all")
        self.proxy_box, proxy = _group("Proxy task (accuracy)")
        proxy.addRow("Backbone", self.backbone)
        proxy.addRow("Dataset", dataset)
        proxy.addRow("Width", self.width)
        proxy.addRow("Resolution", self.resolution)
        proxy.addRow("Epochs", self.epochs)
        proxy.addRow("Examples", self.limit)
        proxy.addRow("Batches per epoch", self.batches)

        # the stages ------------------------------------------------------------------------
        self.fisher = QCheckBox("screen with Fisher Potential")
        self.fisher.setChecked(True)
        self.fisher_threshold = _number(
            1.0, 0.0, 1000.0, " x the original's", "Screen out candidates below this share of the original network's"
        )
        self.fisher.toggled.connect(self.fisher_threshold.setEnabled)
        self.margin = _number(
            1.0, 0.0, 100.0, " points", "How far below the original network's proxy accuracy a candidate may stay"
        )
        self.tune = QCheckBox("time survivors end to end, tuned")
        self.tune.setChecked(True)
        self.tune.setToolTip("The network with the candidate against the original, both with tuned kernels")
        self.stages_box, stages = _group("Stages")
        stages.addRow("", self.fisher)
        stages.addRow("Fisher threshold", self.fisher_threshold)
        stages.addRow("Accuracy margin", self.margin)
        stages.addRow("", self.tune)

        # the deployment size ---------------------------------------------------------------------
        self.deploy_width = _whole(0, 0, 4096, "Channels of the first stage when timing", special="standard")
        self.deploy_resolution = _whole(DEPLOY_RESOLUTION, 8, 1024, "Image size when timing (pixels)", " px")
        self.trials = _whole(32, 0, 100_000, "MetaSchedule trials per kernel not tuned yet (0: reuse only)")
        self.backbone.currentTextChanged.connect(self._standard_width)
        self._standard_width(self.backbone.currentText())
        self.deploy_box, deploy = _group("Deployment (latency)")
        deploy.addRow("Width", self.deploy_width)
        deploy.addRow("Resolution", self.deploy_resolution)
        deploy.addRow("Trials per kernel", self.trials)
        self.tune.toggled.connect(self.deploy_box.setEnabled)

        # budgets ---------------------------------------------------------------------------------
        self.minutes = _whole(60, 0, 100_000, "Stop proposing after this long", " min", special="no limit")
        self.candidates = _whole(0, 0, 1_000_000, "Stop after this many candidates", special="no limit")
        self.budget_box, budget = _group("Budget")
        budget.addRow("Time limit", self.minutes)
        budget.addRow("Candidates", self.candidates)

        # propose only ----------------------------------------------------------------------------
        self.samples = _whole(50, 1, 100_000, "How many candidates to propose")
        self.evaluate = QComboBox()
        for key in EVALUATIONS:
            self.evaluate.addItem(EVALUATION_LABELS[key], key)
        self.measure = QCheckBox("measure every candidate with TVM (untuned)")
        self.propose_box, propose = _group("Propose")
        propose.addRow("Candidates", self.samples)
        propose.addRow("Score", self.evaluate)
        propose.addRow("", self.measure)

        top = QFormLayout()
        top.addRow("Run", self.mode)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        for box in (search_box, self.proxy_box, self.stages_box, self.deploy_box, self.budget_box, self.propose_box):
            layout.addWidget(box)
        layout.addStretch(1)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self._mode_changed()
        for spin in [*self.findChildren(QSpinBox), *self.findChildren(QDoubleSpinBox)]:
            spin.valueChanged.connect(self._changed)
        for combo in self.findChildren(QComboBox):
            combo.currentIndexChanged.connect(self._changed)
            combo.editTextChanged.connect(self._changed)
        for check in self.findChildren(QCheckBox):
            check.toggled.connect(self._changed)

    def _changed(self, *_) -> None:
        self.changed.emit()

    @property
    def discovering(self) -> bool:
        return self.mode.currentData() == DISCOVER

    def _mode_changed(self) -> None:
        for box in (self.proxy_box, self.stages_box, self.deploy_box, self.budget_box):
            box.setVisible(self.discovering)
        self.propose_box.setVisible(not self.discovering)

    def _standard_width(self, backbone: str) -> None:
        self.deploy_width.setSpecialValueText(f"standard ({STANDARD_WIDTH[backbone]})")

    def _browse_dataset(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a dataset folder", str(Path.home()))
        if path:
            self.dataset.setEditText(path)

    # configurations -------------------------------------------------------------------------------
    def _search(self) -> dict:
        return {
            "template": read_document(self.template.currentData()),
            "strategy": self.strategy.currentData(),
            "budget_flops": self.flops.value(),
            "budget_params": self.params.value() if self.use_params.isChecked() else None,
            "max_primitives": self.primitives.value(),
        }

    def discovery_config(self, in_flight: int) -> dict:
        """The discovery run's settings, checked (TesseraError names the first bad one)."""
        search = self._search()
        return discovery_config(
            search.pop("template"),
            self.backbone.currentText(),
            self.seed.value(),
            proxy={
                "dataset": check_source(self.dataset.currentText().strip()),
                "width": self.width.value(),
                "resolution": self.resolution.value(),
                "epochs": self.epochs.value(),
                "theta": 0.5,
                "limit": self.limit.value() or None,
                "max_batches": self.batches.value() or None,
            },
            deploy={
                "width": self.deploy_width.value() or None,
                "resolution": self.deploy_resolution.value(),
                "trials": self.trials.value(),
                "transfer": True,
                "sources": (),
            },
            **search,
            minutes=float(self.minutes.value()) or None,
            samples=self.candidates.value() or None,
            in_flight=in_flight,
            fisher=self.fisher.isChecked(),
            fisher_threshold=self.fisher_threshold.value(),
            margin=round(self.margin.value() / 100, 6),
            tune=self.tune.isChecked(),
            tuning_root=None,
            name="",
        )

    def search_config(self) -> dict:
        """The plain search job's settings, checked (SearchConfig's fields)."""
        config = {
            **self._search(),
            "samples": self.samples.value(),
            "evaluate": self.evaluate.currentData(),
            "seed": self.seed.value(),
            "tune_trials": 0 if self.measure.isChecked() else None,
        }
        SearchConfig.from_dict(config)
        return config


def _group(title: str) -> tuple[QGroupBox, QFormLayout]:
    box = QGroupBox(title)
    form = QFormLayout(box)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return box, form


def _whole(value: int, low: int, high: int, tip: str, suffix: str = "", special: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setSuffix(suffix)
    box.setToolTip(tip + (f" (0: {special})" if special else ""))
    if special:
        box.setSpecialValueText(special)
    box.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
    return box


def _number(value: float, low: float, high: float, suffix: str, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(low, high)
    box.setDecimals(2)
    box.setSingleStep(0.1 if high <= 100 else 0.5)
    box.setSuffix(suffix)
    box.setValue(value)
    box.setToolTip(tip)
    return box
