"""The Evaluate / Tune dialog: where to measure, at which sizes (one bindings set per
line, each becoming jobs), and, for Tune, how: search schedules with MetaSchedule for a
number of trials, or reuse tuned schedules of the same kernel class (transfer-tuning,
any CPU device). "Compare variants" measures every algorithm, untuned and tuned."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.compile.requests import MeasureRequest
from core.devices import Device
from core.errors import TesseraError
from core.ir.bindings import parse_bindings

from .request_dialog import RequestDialog

DEFAULT_TRIALS = 32
SEARCH, TRANSFER = "search", "transfer"
EXPLANATIONS = {
    "evaluate": "Compile with TVM's default schedule, check against PyTorch, and time both.",
    SEARCH: "MetaSchedule searches schedules, measuring each candidate, then the best one is checked "
    "against PyTorch and timed.",
    TRANSFER: "Schedules already tuned for kernels of the same class (same operations, other sizes) are "
    "applied to this one; the fastest is kept, or TVM's default if none helps. Seconds instead of "
    "minutes, on CPU devices.",
}
STORE_FILTER = "Results stores (*.db *.sqlite *.sqlite3);;All files (*)"


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


class MeasureDialog(RequestDialog):
    """Emits `submitted` with a MeasureRequest when the user confirms a valid one."""

    def __init__(
        self,
        parent,
        *,
        tune: bool,
        subject: str,
        bindings: list[dict[str, int]],
        devices: list[Device],
        own_bindings: bool = False,
        check: Callable[[dict[str, int]], str | None] | None = None,
        trials: int = DEFAULT_TRIALS,
        transfer: bool = False,
    ):
        """`bindings` fill the sets box; `devices` (core.devices.list_devices) fill the device
        list, the default one chosen; `own_bindings` offers "each result's own bindings";
        `check(bindings)` returns why a set cannot be measured, or None; `transfer` starts
        Tune on reusing schedules."""
        super().__init__(parent)
        self.tune, self.check, self.offers_own = tune, check, own_bindings
        verb = "Tune" if tune else "Evaluate"
        self.setWindowTitle(verb)
        heading = QLabel(f"<b>{verb} {subject}</b>")
        self.explanation = QLabel()
        self.explanation.setObjectName("hint")
        self.explanation.setWordWrap(True)
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
        self.method = QComboBox()
        self.method.addItem("Search schedules with MetaSchedule", SEARCH)
        self.method.addItem("Reuse tuned schedules (transfer-tuning)", TRANSFER)
        self.method.setCurrentIndex(1 if transfer else 0)
        self.trials = QSpinBox()
        self.trials.setRange(1, 100_000)
        self.trials.setValue(trials)
        self.trials.setToolTip("How many candidate schedules MetaSchedule may build and measure")
        self.sources = QListWidget()
        self.sources.setFixedHeight(60)
        self.sources.setToolTip(
            "Tuning folders or results stores (their finished Tune jobs) to take schedules "
            "from; with several, the one whose tuned kernels best cover this operator's class "
            "is chosen."
        )
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 64)
        self.top_k.setToolTip("How many of each tuned kernel's best schedules to try, fastest first")
        self.variants = QCheckBox("Compare variants: each algorithm" + (", untuned and tuned" if tune else ""))
        self.variants.setToolTip(
            "Queue one job per algorithm that can run the operator: TVM's default lowering and, "
            "for convolutions, the grouped spatial pack, blocked NCHWc, im2col + GEMM and Winograd, "
            "and for a depthwise then a pointwise convolution, the two fused"
            + (", each untuned and tuned" if tune else "")
            + ". Compare them in the results table (Algorithm, Tuned, Schedule columns)."
        )

        form = self.form = QFormLayout()
        form.addRow("Method", self.method)
        form.addRow("Device", self.device)
        form.addRow("Bindings", self.bindings)
        form.addRow("", self.own)
        form.addRow("Trials", self.trials)
        form.addRow("Reuse from", self._sources_box())
        form.addRow("Schedules per kernel", self.top_k)
        form.addRow("", self.variants)
        form.setRowVisible(self.own, own_bindings)
        form.setRowVisible(self.method, tune)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(verb)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(self.explanation)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(520)
        self.method.currentIndexChanged.connect(self._method_changed)
        self._method_changed()

    def _sources_box(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.sources)
        hint = QLabel("None listed: this machine's tuning folder, where every Tune keeps its schedules.")
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        row = QHBoxLayout()
        for text, slot in (
            ("Add Folder…", self._pick_folder),
            ("Add Results Store…", self._pick_store),
            ("Remove", self._remove_sources),
        ):
            button = QPushButton(text)
            button.clicked.connect(slot)
            row.addWidget(button)
        row.addStretch()
        layout.addLayout(row)
        self.sources_box = box
        return box

    @property
    def transfer(self) -> bool:
        return self.tune and self.method.currentData() == TRANSFER

    def _method_changed(self) -> None:
        transfer = self.transfer
        self.explanation.setText(EXPLANATIONS[self.method.currentData() if self.tune else "evaluate"])
        self.form.setRowVisible(self.trials, self.tune and not transfer)
        self.form.setRowVisible(self.sources_box, transfer)
        self.form.setRowVisible(self.top_k, transfer)
        self.form.setRowVisible(self.variants, not transfer)
        self.adjustSize()

    def add_source(self, path: str) -> None:
        """A tuning folder or results store to reuse schedules from (once)."""
        if path and not self.sources.findItems(path, Qt.MatchFlag.MatchExactly):
            self.sources.addItem(path)

    def _remove_sources(self) -> None:
        for item in self.sources.selectedItems():
            self.sources.takeItem(self.sources.row(item))

    def _pick_folder(self) -> None:
        self.add_source(QFileDialog.getExistingDirectory(self, "Tuning folder to reuse schedules from"))

    def _pick_store(self) -> None:
        self.add_source(QFileDialog.getOpenFileName(self, "Results store to reuse schedules from", "", STORE_FILTER)[0])

    def request(self) -> MeasureRequest:
        """The request as typed; a TesseraError naming the line or path at fault."""
        sets = []
        if not (self.offers_own and self.own.isChecked()):
            for number, line in enumerate(self.bindings.toPlainText().splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    bindings = parse_bindings(line)
                except TesseraError as e:
                    raise TesseraError(f"line {number}: {e}") from None
                problem = self.check(bindings) if self.check else None
                if problem:
                    raise TesseraError(f"line {number} ({line.strip()}): {problem}")
                sets.append(bindings)
            if not sets:
                raise TesseraError("give at least one set of bindings, e.g. C_in=64, C_out=64, H=56, W=56, K=3")
        if not self.transfer:
            return MeasureRequest(
                device=self.device.currentData(),
                bindings_sets=tuple(sets),
                trials=self.trials.value() if self.tune else 0,
                variants=self.variants.isChecked(),
            )
        sources = tuple(self.sources.item(i).text() for i in range(self.sources.count()))
        for path in sources:
            if not Path(path).exists():
                raise TesseraError(f"{path}: no such tuning folder or results store")
        return MeasureRequest(
            device=self.device.currentData(),
            bindings_sets=tuple(sets),
            transfer=True,
            sources=sources,
            top_k=self.top_k.value(),
        )
