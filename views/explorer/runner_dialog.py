"""Run > Job Runner…: where jobs run. Local worker processes (the default) or a Ray
cluster (an address, or a local Ray instance started for the session) for the kinds a
cluster may take (core.jobs.registry.cluster_kinds); measurement stays on this machine's
workers either way. The choice applies the next time workers start."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
)

from core.errors import TesseraError
from core.jobs.executors import choose_executor
from core.jobs.registry import cluster_kinds


class RunnerDialog(QDialog):
    def __init__(self, parent, executor: str = "local", address: str | None = None):
        super().__init__(parent)
        self.setWindowTitle("Job Runner")
        self.local = QRadioButton("Local worker processes")
        self.ray = QRadioButton("Ray cluster")
        group = QButtonGroup(self)
        for button in (self.local, self.ray):
            group.addButton(button)
        (self.ray if executor == "ray" else self.local).setChecked(True)
        self.address = QLineEdit(address or "")
        self.address.setPlaceholderText("empty: a local Ray instance for this session")
        placeholder = self.address.fontMetrics().horizontalAdvance(self.address.placeholderText())
        self.address.setMinimumWidth(placeholder + 32)  # the whole placeholder shows (padding, border, margins)
        self.address.setToolTip("HOST:PORT of the Ray cluster's head node, e.g. 10.0.0.5:6379")
        hint = QLabel(
            f"On Ray: {', '.join(cluster_kinds())} jobs. Measurement, tuning and searches "
            "stay in local workers. Applies the next time workers start."
        )
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow(self.local)
        form.addRow(self.ray)
        form.addRow("Address:", self.address)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(hint)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.ray.toggled.connect(self._changed)
        self.address.textChanged.connect(self._changed)
        self._changed()

    def choice(self) -> tuple[str, str | None]:
        """(executor name, Ray address or None)."""
        address = self.address.text().strip() if self.ray.isChecked() else ""
        return ("ray" if self.ray.isChecked() else "local"), address or None

    def _changed(self) -> None:
        self.address.setEnabled(self.ray.isChecked())
        try:
            choose_executor(*self.choice())
            problem = ""
        except TesseraError as e:
            problem = str(e)
        self.error.setText(problem)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problem)
