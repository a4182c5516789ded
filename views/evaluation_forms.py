"""The settings of an accuracy evaluation, as form groups the Search page and the Evaluate
Accuracy dialog share: the proxy task (backbone, dataset, size, epochs, how much data) and
the deployment size where networks are timed end to end (width, resolution, trials), with
`tessera discover`'s and `tessera evaluate`'s defaults. They hold values; core checks them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QSpinBox,
    QToolButton,
)

from core.data.bundled import BUNDLED
from core.data.dataset_check import check_source
from core.data.datasets import DEFAULT_DATASET, DEFAULT_RESOLUTION, SOURCES
from core.data.specs import BACKBONE_NAMES
from core.networks.settings import DEPLOY_RESOLUTION, STANDARD_WIDTH, DeploySettings
from core.train.settings import EvalSettings, TrainConfig


class ProxyTaskForm(QGroupBox):
    """Where accuracy is measured: the backbone with the operator in its convolutions, trained
    briefly on a dataset at a small width and resolution."""

    def __init__(self, title: str = "Proxy task (accuracy)", parent=None):
        super().__init__(title, parent)
        self.backbone = QComboBox()
        self.backbone.addItems(BACKBONE_NAMES)
        self.backbone.setToolTip("The network the operator is trained in (its convolutions replaced)")
        self.dataset = QComboBox()
        self.dataset.setEditable(True)
        self.dataset.addItems([DEFAULT_DATASET, *(name for name in BUNDLED if name != DEFAULT_DATASET)])
        self.dataset.setToolTip(SOURCES[0].upper() + SOURCES[1:])
        browse = QToolButton()
        browse.setText("…")
        browse.setToolTip("Choose a dataset folder (CIFAR binary files or one folder per class)")
        browse.clicked.connect(self._browse)
        dataset = QHBoxLayout()
        dataset.addWidget(self.dataset, 1)
        dataset.addWidget(browse)
        self.width_box = whole(16, 1, 1024, "Channels of the backbone's first stage while training")
        self.resolution = whole(DEFAULT_RESOLUTION, 8, 512, "Image size while training (pixels)", " px")
        self.epochs = whole(
            TrainConfig.epochs, 1, 1000, "Training epochs (early-stopped against the best stored curve)"
        )
        self.limit = whole(0, 0, 10_000_000, "Train on a stratified sample of this many examples", special="all")
        self.batches = whole(0, 0, 1_000_000, "Batches per epoch at most", special="all")
        form = form_of(self)
        form.addRow("Backbone", self.backbone)
        form.addRow("Dataset", dataset)
        form.addRow("Width", self.width_box)
        form.addRow("Resolution", self.resolution)
        form.addRow("Epochs", self.epochs)
        form.addRow("Examples", self.limit)
        form.addRow("Batches per epoch", self.batches)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a dataset folder", str(Path.home()))
        if path:
            self.dataset.setEditText(path)

    def source(self) -> str:
        """The dataset as typed, checked (a bundled name or an existing path; DatasetError)."""
        return check_source(self.dataset.currentText().strip())

    def training(self) -> dict:
        """The proxy task's settings besides backbone and seed (None: left out)."""
        return {
            "dataset": self.source(),
            "width": self.width_box.value(),
            "resolution": self.resolution.value(),
            "epochs": self.epochs.value(),
            "theta": 0.5,
            "limit": self.limit.value() or None,
            "max_batches": self.batches.value() or None,
        }

    def settings(self, seed: int = 0) -> EvalSettings:
        """The evaluation settings (EvaluationError or BackboneError names a bad one)."""
        return EvalSettings(
            dataset=self.source(),
            backbone=self.backbone.currentText(),
            width=self.width_box.value(),
            resolution=self.resolution.value(),
            seed=seed,
            limit=self.limit.value() or None,
        )


class DeploymentForm(QGroupBox):
    """Where networks are timed, tuned: the backbone (of the proxy task) at a deployment width
    and resolution, with a trial budget per kernel not tuned yet."""

    def __init__(self, backbone: QComboBox, title: str = "Deployment (latency)", parent=None):
        super().__init__(title, parent)
        self.backbone = backbone
        self.width_box = whole(0, 0, 4096, "Channels of the first stage when timing", special="standard")
        self.resolution = whole(DEPLOY_RESOLUTION, 8, 1024, "Image size when timing (pixels)", " px")
        self.trials = whole(32, 0, 100_000, "MetaSchedule trials per kernel not tuned yet (0: reuse only)")
        backbone.currentTextChanged.connect(self._standard_width)
        self._standard_width(backbone.currentText())
        form = form_of(self)
        form.addRow("Width", self.width_box)
        form.addRow("Resolution", self.resolution)
        form.addRow("Trials per kernel", self.trials)

    def _standard_width(self, backbone: str) -> None:
        self.width_box.setSpecialValueText(f"standard ({STANDARD_WIDTH[backbone]})")

    def timing(self) -> dict:
        """DeploySettings' fields besides backbone and seed."""
        return {
            "width": self.width_box.value() or None,
            "resolution": self.resolution.value(),
            "trials": self.trials.value(),
            "transfer": True,
            "sources": (),
        }

    def settings(self, seed: int = 0) -> DeploySettings:
        return DeploySettings(backbone=self.backbone.currentText(), seed=seed, **self.timing())


def form_of(box: QGroupBox) -> QFormLayout:
    form = QFormLayout(box)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return form


def whole(value: int, low: int, high: int, tip: str, suffix: str = "", special: str = "") -> QSpinBox:
    """A whole-number field; with `special`, 0 reads as that word (e.g. 'all', 'no limit')."""
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setSuffix(suffix)
    box.setToolTip(tip + (f" (0: {special})" if special else ""))
    if special:
        box.setSpecialValueText(special)
    box.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
    return box


def number(value: float, low: float, high: float, suffix: str, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(low, high)
    box.setDecimals(2)
    box.setSingleStep(0.1 if high <= 100 else 0.5)
    box.setSuffix(suffix)
    box.setValue(value)
    box.setToolTip(tip)
    return box
