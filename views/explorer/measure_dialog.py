"""The Evaluate / Tune dialog: where to measure, at which sizes (one bindings set per
line, each becoming a job) and, for Tune, how many MetaSchedule trials to spend."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                               QPlainTextEdit, QSpinBox, QVBoxLayout)

from core.devices import Device
from core.ir.bindings import parse_bindings
from core.ir.errors import BindingError

from .submit import MeasureRequest

DEFAULT_TRIALS = 32


def device_label(device: Device) -> str:
    """'local: this machine's CPU' or 'rasp4: key rasp4 at 10.0.0.5:9190 (2 free at 14:02)'."""
    if device.is_local:
        return f"{device.name}: this machine's CPU"
    check = device.last_check or {}
    if not check:
        health = "not checked yet"
    elif check.get("error"):
        health = "unreachable at the last check"
    else:
        health = f"{check.get('free', 0)} free at the last check"
    return f"{device.name}: key {device.key} at {device.tracker} ({health})"


class MeasureDialog(QDialog):
    submitted = Signal(object)  # MeasureRequest, when the user confirms a valid request

    def __init__(self, parent, *, tune: bool, subject: str, bindings: list[dict[str, int]],
                 devices: list[Device], own_bindings: bool = False,
                 check: Callable[[dict[str, int]], str | None] | None = None, trials: int = DEFAULT_TRIALS):
        """`bindings` fill the sets box; `devices` (core.devices.list_devices) fill the device
        list, the default one chosen; `own_bindings` offers "each result's own bindings";
        `check(bindings)` returns why a set cannot be measured, or None."""
        super().__init__(parent)
        self.tune, self.check, self.offers_own = tune, check, own_bindings
        verb = "Tune" if tune else "Evaluate"
        self.setWindowTitle(verb)
        heading = QLabel(f"<b>{verb} {subject}</b>")
        explanation = QLabel("MetaSchedule searches schedules, measuring each candidate, then the best one is "
                             "checked against PyTorch and timed." if tune else
                             "Compile with TVM's default schedule, check against PyTorch, and time both.")
        explanation.setObjectName("hint")
        explanation.setWordWrap(True)
        self.device = QComboBox()
        for device in devices:
            self.device.addItem(device_label(device), device.name)
            self.device.setItemData(self.device.count() - 1, device.describe(), Qt.ItemDataRole.ToolTipRole)
            if device.default:
                self.device.setCurrentIndex(self.device.count() - 1)
        self.own = QCheckBox("Each result's own bindings")
        self.own.setChecked(own_bindings)
        self.bindings = QPlainTextEdit("\n".join(", ".join(f"{k}={v}" for k, v in b.items()) for b in bindings))
        self.bindings.setPlaceholderText("C_in=64, C_out=64, H=56, W=56, K=3\nC_in=128, C_out=128, H=28, W=28, K=3")
        self.bindings.setToolTip("One set of sizes per line; each line becomes one job.")
        self.bindings.setFixedHeight(84)
        self.own.toggled.connect(lambda on: self.bindings.setEnabled(not on))
        self.bindings.setEnabled(not self.own.isChecked())
        self.trials = QSpinBox()
        self.trials.setRange(1, 100_000)
        self.trials.setValue(trials)
        self.trials.setToolTip("How many candidate schedules MetaSchedule may build and measure")
        self.error = QLabel()
        self.error.setObjectName("errorText")
        self.error.setWordWrap(True)
        self.error.hide()

        form = QFormLayout()
        form.addRow("Device", self.device)
        form.addRow("Bindings", self.bindings)
        form.addRow("", self.own)
        form.addRow("Trials", self.trials)
        form.setRowVisible(self.own, own_bindings)
        form.setRowVisible(self.trials, tune)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(verb)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(explanation)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(460)

    def request(self) -> MeasureRequest:
        """The request as typed; BindingError naming the line at fault."""
        sets = []
        if not (self.offers_own and self.own.isChecked()):
            for number, line in enumerate(self.bindings.toPlainText().splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    bindings = parse_bindings(line)
                except BindingError as e:
                    raise BindingError(f"line {number}: {e}") from None
                problem = self.check(bindings) if self.check else None
                if problem:
                    raise BindingError(f"line {number} ({line.strip()}): {problem}")
                sets.append(bindings)
            if not sets:
                raise BindingError("give at least one set of bindings, e.g. C_in=64, C_out=64, H=56, W=56, K=3")
        return MeasureRequest(self.device.currentData(), tuple(sets), self.trials.value() if self.tune else 0)

    def accept(self) -> None:
        try:
            request = self.request()
        except BindingError as e:
            self.error.setText(str(e))
            self.error.show()
            return
        self.submitted.emit(request)
        super().accept()
