"""The Evaluate Accuracy dialog: score operators in a backbone as the discovery loop does.
Fisher Potential at initialisation, proxy training (early-stopped against the best curve the
store holds for the same task), test accuracy over seeds paired with the original's, and, if asked, the network with the operator timed end to
end against the original, both tuned. The request is checked by core before it closes."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout

from core.train.paired import SEEDS
from core.train.requests import AccuracyRequest
from core.train.sequential import DEFAULT_RULE

from ..evaluation_forms import DeploymentForm, ProxyTaskForm, whole
from .request_dialog import RequestDialog


class AccuracyDialog(RequestDialog):
    """Emits `submitted` with an AccuracyRequest when the user confirms a valid one."""

    def __init__(self, parent, subject: str):
        super().__init__(parent)
        self.setWindowTitle(f"Evaluate Accuracy: {subject}")
        intro = QLabel(
            f"Train <b>{subject}</b> in a backbone, in place of every convolution it fits, and score it "
            "as the discovery loop does. The numbers land in the results and on the plot."
        )
        intro.setWordWrap(True)
        self.proxy = ProxyTaskForm()
        self.seeds = whole(
            SEEDS,
            0,
            20,
            "Train it and the original again with this many seeds, test both on the test split and report the "
            "paired difference with its 95% interval",
            special="no test",
        )
        rule = DEFAULT_RULE
        self.until_decided = QCheckBox(
            f"Add test seeds until the verdict decides ({rule.first}, then {rule.step} more at a time up to {rule.cap})"
        )
        self.until_decided.setToolTip(
            "Stop as soon as the paired interval lies entirely above or below the margin, with the error spread "
            "over the looks; uncheck to train a fixed number of seeds"
        )
        self.until_decided.setChecked(True)
        self.seeds.setEnabled(False)
        self.until_decided.toggled.connect(self._enable)
        seeds_row = QFormLayout()
        seeds_row.addRow(self.until_decided)
        seeds_row.addRow("Test seeds", self.seeds)
        self.fisher_only = QCheckBox("Fisher Potential only (seconds: no training)")
        self.e2e = QCheckBox("Time the network end to end, tuned against the tuned original")
        self.e2e.setToolTip("MetaSchedule tunes every kernel not tuned yet: minutes per network")
        self.deployment = DeploymentForm(self.proxy.backbone)
        self.deployment.setEnabled(False)
        self.e2e.toggled.connect(self._enable)
        self.fisher_only.toggled.connect(self._enable)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.evaluate_button = self.buttons.addButton("Evaluate", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.proxy)
        layout.addLayout(seeds_row)
        layout.addWidget(self.fisher_only)
        layout.addWidget(self.e2e)
        layout.addWidget(self.deployment)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)

    def _enable(self) -> None:
        training = not self.fisher_only.isChecked()
        for widget in (self.proxy.epochs, self.proxy.batches, self.until_decided, self.e2e):
            widget.setEnabled(training)
        self.seeds.setEnabled(training and not self.until_decided.isChecked())
        self.deployment.setEnabled(training and self.e2e.isChecked())

    def request(self) -> AccuracyRequest:
        """The request the dialog describes (TesseraError names a bad setting)."""
        timed = self.e2e.isChecked() and not self.fisher_only.isChecked()
        return AccuracyRequest(
            self.proxy.settings(),
            epochs=self.proxy.epochs.value(),
            max_batches=self.proxy.batches.value() or None,
            seeds=self.seeds.value(),
            rule=DEFAULT_RULE if self.until_decided.isChecked() else None,
            fisher_only=self.fisher_only.isChecked(),
            deploy=self.deployment.settings() if timed else None,
        )
