"""Run > Devices…: the devices of the results store. Add an RPC device (a TVM tracker, the
key its servers register under, the target to compile for), see each device's servers
free and busy at its last check, check one now, choose the default, remove one.

Everything goes through core.devices; a check imports TVM, so it runs in a worker process
(views.background) and the window stays responsive while a tracker does not answer. The
window keeps one dialog and hides it on Close, so a check still running lands when done."""

from __future__ import annotations

import json
import time

from PySide6.QtCore import QThreadPool, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from core.devices import Device, add_device, list_devices, record_check, remove_device, set_default
from core.errors import TesseraError

from .. import theme
from ..background import CallSignals, SubprocessCall
from .record_table import list_records

CHECK = "core.compile.health:check_call"
CHECK_TIMEOUT_S = 30.0
HEADERS = ("Device", "Tracker", "Key", "Target", "Servers", "Last check")
#: starting points for the target box; any TVM target dict is accepted
TARGET_PRESETS = {
    "CPU like this machine (LLVM)": {"kind": "llvm"},
    "64-bit ARM Linux (Raspberry Pi 4)": {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72"},
    "NVIDIA GPU (CUDA)": {"kind": "cuda"},
}


def servers_text(device: Device) -> str:
    check = device.last_check or {}
    if device.is_local or not check or check.get("free") is None:
        return "—"
    return f"{check['free']} free, {check.get('busy') or 0} busy" + (
        f", {check['pending']} waiting" if check.get("pending") else ""
    )


def check_text(device: Device) -> str:
    """'14:02: round trip 3.1 ms', '14:02: tracker 10.0.0.5:9190 refused the connection', 'never'."""
    check = device.last_check
    if not check:
        return "never"
    when = time.strftime("%H:%M", time.localtime(check.get("checked") or 0))
    if check.get("error"):
        return f"{when}: {check['error']}"
    trip = check.get("round_trip_ms")
    return f"{when}: " + (f"round trip {trip:.1f} ms" if trip is not None else "reachable")


class DevicesDialog(QDialog):
    changed = Signal()  # devices added, removed, checked or a new default

    def __init__(self, store, parent=None):
        super().__init__(parent)
        self.store = store
        self.setWindowTitle("Devices")
        self.devices: list[Device] = []
        self.checking: set[str] = set()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(4)

        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        list_records(self.table)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._update_buttons)

        self.check_button = QPushButton("Check Now")
        self.check_button.setToolTip("Ask the tracker for the key's servers and time a tiny kernel on one")
        self.check_button.clicked.connect(self.check_selected)
        self.default_button = QPushButton("Make Default")
        self.default_button.setToolTip("New Evaluate and Tune requests start on this device")
        self.default_button.clicked.connect(self.make_default)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the device; its measurements stay in the store")
        self.remove_button.clicked.connect(self.remove_selected)
        row = QHBoxLayout()
        for button in (self.check_button, self.default_button, self.remove_button):
            row.addWidget(button)
        row.addStretch(1)

        self.name = QLineEdit()
        self.name.setPlaceholderText("rasp4")
        self.tracker = QLineEdit("127.0.0.1:9190")
        self.tracker.setToolTip("HOST:PORT of the TVM RPC tracker (`tessera device tracker`)")
        self.key = QLineEdit()
        self.key.setPlaceholderText("the --key its servers were started with")
        self.preset = QComboBox()
        for label, target in TARGET_PRESETS.items():
            self.preset.addItem(label, target)
        self.target = QLineEdit(json.dumps(TARGET_PRESETS[self.preset.currentText()]))
        self.target.setToolTip('A TVM target as JSON, e.g. {"kind": "llvm", "mtriple": "aarch64-linux-gnu"}')
        self.preset.activated.connect(lambda _: self.target.setText(json.dumps(self.preset.currentData())))
        self.add_button = QPushButton("Add Device")
        self.add_button.clicked.connect(self.add)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Tracker", self.tracker)
        form.addRow("Key", self.key)
        form.addRow("Target", self.preset)
        form.addRow("", self.target)
        form.addRow("", self.add_button)
        adding = QGroupBox("Add an RPC device")
        adding.setLayout(form)

        self.status = QLabel()
        self.status.setWordWrap(True)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(adding)
        layout.addWidget(self.status)
        layout.addWidget(close)
        self.resize(900, 520)
        self.refresh()

    # -- the list -----------------------------------------------------------------------------
    def refresh(self, select: str | None = None) -> None:
        select = select or self.selected_name()
        self.devices = list_devices(self.store)
        self.table.setRowCount(len(self.devices))
        for r, device in enumerate(self.devices):
            checking = device.name in self.checking
            values = (
                device.name + ("  (default)" if device.default else ""),
                device.tracker or "—",
                device.key or "—",
                json.dumps(device.target) if device.target else "this machine",
                servers_text(device),
                "checking…" if checking else check_text(device),
            )
            for c, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setToolTip(device.describe() if c == 0 else text)
                if c == len(values) - 1 and (device.last_check or {}).get("error") and not checking:
                    item.setForeground(theme.severity_color("error"))
                self.table.setItem(r, c, item)
            if device.name == select:
                self.table.selectRow(r)
        self._update_buttons()

    def selected(self) -> Device | None:
        rows = self.table.selectionModel().selectedRows()
        return self.devices[rows[0].row()] if rows else None

    def selected_name(self) -> str | None:
        device = self.selected() if self.table.rowCount() else None
        return device.name if device else None

    def _update_buttons(self) -> None:
        device = self.selected()
        self.check_button.setEnabled(device is not None and device.name not in self.checking)
        self.default_button.setEnabled(device is not None and not device.default)
        self.remove_button.setEnabled(device is not None and not device.is_local)

    # -- actions ------------------------------------------------------------------------------
    def add(self) -> None:
        name = self.name.text().strip()
        if self._attempt(
            lambda: add_device(
                self.store,
                name,
                self.tracker.text().strip(),
                self.key.text().strip(),
                self.target.text().strip() or None,
            ),
            f"Added {name}; checking it…",
        ):
            self.name.clear()
            self.refresh(select=name)
            self.check_selected()

    def remove_selected(self) -> None:
        device = self.selected()
        if device is not None and self._attempt(
            lambda: remove_device(self.store, device.name),
            f"Removed {device.name}; its measurements stay in the store.",
        ):
            self.refresh()

    def make_default(self) -> None:
        device = self.selected()
        if device is not None and self._attempt(
            lambda: set_default(self.store, device.name), f"New jobs run on {device.name} unless told otherwise."
        ):
            self.refresh()

    def check_selected(self) -> None:
        device = self.selected()
        if device is None or device.name in self.checking:
            return
        self.checking.add(device.name)
        signals = CallSignals(self)
        signals.ended.connect(lambda answer, error: self._checked(device.name, answer, error))
        self._pool.start(
            SubprocessCall(
                CHECK, {"config": device.to_dict(), "timeout": CHECK_TIMEOUT_S}, signals, CHECK_TIMEOUT_S + 60
            )
        )
        self.refresh()

    def _checked(self, name: str, answer: dict | None, error: str) -> None:
        self.checking.discard(name)
        answer = answer or {"reachable": False, "error": f"the check could not run: {error}", "checked": time.time()}
        problem = answer.get("error")
        if self._attempt(
            lambda: record_check(self.store, name, answer),
            f"{name}: {problem}" if problem else f"{name} is ready.",
            error=bool(problem),
        ):
            self.refresh()

    def is_checking(self) -> bool:
        return bool(self.checking)

    def _attempt(self, change, done: str, error: bool = False) -> bool:
        """Run one change of the store's devices; show what happened, or why not."""
        try:
            change()
        except TesseraError as e:
            self._show(str(e), "error")
            return False
        self._show(done, "error" if error else "info")
        self.changed.emit()
        return True

    def _show(self, text: str, severity: str) -> None:
        self.status.setStyleSheet(f"color: {theme.SEVERITY_COLORS[severity]}")
        self.status.setText(text)
