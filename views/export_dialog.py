"""The export dialog: pick a format and a file, confirm before replacing files, and export
in a spawned worker process (views.export_files.export_call through core.jobs.isolate), so
torch, TVM and picture drawing never run in the GUI process and the window never waits.

Open it for a stored operator (`target="12"` plus `store`), an operator file, or the
editor's current document (`document=`); `formats=RESULTS_FORMATS` exports the store. The
window gives it its folder (set_directory) and reports what `exported` wrote where."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QThreadPool, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.data.specs import DEFAULT_REPLACE, REPLACE_KINDS
from core.errors import TesseraError
from core.export import FORMATS, OPERATOR_FORMATS, UNSEQUENCED_FORMATS, ExportError, Format, file_stem, output_paths
from core.networks.user_models import ModelRef, parse_input

from . import theme
from .background import CallSignals, SubprocessCall

WORKER = "views.export_files:export_call"
PREVIEW_WORKER = "views.export_files:preview_call"
TORCH_FORMATS = ("torch", "torch-replace")
TIMEOUT_S = 1200


class ExportDialog(QDialog):
    exported = Signal(list)  # the files written
    failed = Signal(str)  # why not (the dialog stays open)

    def __init__(
        self,
        *,
        target: str | None = None,
        document: dict | None = None,
        name: str = "operator",
        store: str | Path | None = None,
        bindings: dict[str, int] | None = None,
        formats: Sequence[Format] = UNSEQUENCED_FORMATS,
        columns: Sequence[str] = (),
        directory: str | Path | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle(f"Export {name}")
        self.name = name
        self._request = {
            "target": target,
            "document": document,
            "bindings": dict(bindings or {}),
            "store": str(store) if store else None,
        }
        if columns:  # the two objectives of a Pareto export
            self._request["columns"] = ",".join(columns)
        self._directory = Path(directory) if directory else Path.home()
        self._path_edited = False
        self._running = False

        self.format_box = QComboBox()
        for f in formats:
            self.format_box.addItem(f"{f.name}: {f.description}", f.name)
        self.path_edit = QLineEdit()
        self.path_edit.textEdited.connect(self._path_typed)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(browse)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.start_export)
        self.buttons.rejected.connect(self.reject)

        self.torch_options = self._torch_options()
        form = QFormLayout()
        form.addRow("Format", self.format_box)
        form.addRow("File", path_row)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.torch_options)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.resize(560, self.sizeHint().height())

        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = CallSignals(self)
        self._signals.ended.connect(self._ended)
        self._preview_signals = CallSignals(self)
        self._preview_signals.ended.connect(self._previewed)
        self.format_box.currentIndexChanged.connect(self._suggest_path)
        self.format_box.currentIndexChanged.connect(self._show_torch_options)
        self._suggest_path()
        self._show_torch_options()

    @classmethod
    def of_stored(
        cls,
        store: str | Path,
        operator_id: int,
        name: str | None,
        bindings: dict[str, int] | None = None,
        parent: QWidget | None = None,
        sequence: bool = False,
    ) -> ExportDialog:
        """For an operator of the results store, at `bindings` (default: its own); `sequence`:
        a transformation sequence made it, so it can be exported too."""
        return cls(
            target=str(operator_id),
            store=store,
            name=name or f"operator{operator_id}",
            bindings=bindings,
            formats=OPERATOR_FORMATS if sequence else UNSEQUENCED_FORMATS,
            parent=parent,
        )

    @property
    def format(self) -> str:
        return self.format_box.currentData()

    def set_format(self, name: str) -> None:
        index = self.format_box.findData(name)
        if index < 0:
            raise ValueError(f"format {name!r} is not offered here")
        self.format_box.setCurrentIndex(index)

    def set_directory(self, directory: str | Path) -> None:
        """The folder the suggested file goes to (until the user types or picks a path)."""
        self._directory = Path(directory)
        self._suggest_path()

    def set_path(self, path: str | Path) -> None:
        self.path_edit.setText(str(path))
        self._path_edited = True

    def is_running(self) -> bool:
        return self._running

    # exporting ----------------------------------------------------------------------
    def start_export(self) -> None:
        """Check the target files, ask before replacing any, then export in a worker."""
        if self._running:
            return
        out = self.path_edit.text().strip()
        if not out:
            self._show_status("Choose a file to write.", "error")
            return
        try:
            paths = output_paths(self.format, out, self.name)
        except ExportError as e:
            self._show_status(str(e), "error")
            return
        existing = [p for p in paths if p.exists()]
        if existing:
            names = "\n".join(str(p) for p in existing)
            answer = QMessageBox.question(
                self,
                "Replace files?",
                f"These files already exist:\n{names}\n\nReplace them?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                self._show_status("Nothing exported: the existing files were kept.", "info")
                return
        self._set_running(True)
        self._show_status(f"Exporting {self.format} in a worker process…", "info")
        request = {**self._export_request(), "fmt": self.format, "out": out, "force": True}
        self._pool.start(SubprocessCall(WORKER, {"request": request}, self._signals, TIMEOUT_S))

    # the PyTorch formats' options, and what replace_convs would do to a model ---------
    def _torch_options(self) -> QWidget:
        box = QWidget()
        self.generic_box = QCheckBox("Shape-generic: sizes given at construction, any height and width")
        self.generic_box.setChecked(True)
        self.kind_boxes = {}
        kinds = QHBoxLayout()
        kinds.addWidget(QLabel("replace_convs replaces:"))
        for kind, what in REPLACE_KINDS.items():
            self.kind_boxes[kind] = QCheckBox(kind)
            self.kind_boxes[kind].setToolTip(what)
            self.kind_boxes[kind].setChecked(kind in DEFAULT_REPLACE)
            kinds.addWidget(self.kind_boxes[kind])
        kinds.addStretch(1)
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("your model: FILE.py:FUNCTION (the function that builds it)")
        pick = QPushButton("Model…")
        pick.clicked.connect(self._pick_model)
        self.input_edit = QLineEdit("3,224,224")
        self.input_edit.setToolTip("one example's channels,height,width")
        self.input_edit.setMaximumWidth(110)
        self.preview_button = QPushButton("What would it replace?")
        self.preview_button.clicked.connect(self.start_preview)
        model_row = QHBoxLayout()
        for widget, stretch in ((self.model_edit, 1), (pick, 0), (self.input_edit, 0), (self.preview_button, 0)):
            model_row.addWidget(widget, stretch)
        self.preview_text = QPlainTextEdit()
        self.preview_text.setReadOnly(True)
        self.preview_text.setPlaceholderText(
            "Pick a model file to see which of its convolutions the operator replaces, and why the others stay "
            "(the file runs in a worker process)."
        )
        self.preview_text.setMaximumHeight(160)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.generic_box)
        self.replace_part = QWidget()
        part = QVBoxLayout(self.replace_part)
        part.setContentsMargins(0, 0, 0, 0)
        part.addLayout(kinds)
        part.addLayout(model_row)
        part.addWidget(self.preview_text)
        layout.addWidget(self.replace_part)
        self.generic_box.toggled.connect(self._show_torch_options)
        return box

    def _show_torch_options(self) -> None:
        self.torch_options.setVisible(self.format in TORCH_FORMATS)
        self.replace_part.setVisible(self.format == "torch-replace" and self.generic_box.isChecked())

    def kinds(self) -> list[str]:
        return [kind for kind, box in self.kind_boxes.items() if box.isChecked()]

    def _export_request(self) -> dict:
        if self.format not in TORCH_FORMATS:
            return dict(self._request)
        return {**self._request, "generic": self.generic_box.isChecked(), "kinds": self.kinds()}

    def _pick_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Your model", str(self._directory), "Python files (*.py)")
        if path:
            self.model_edit.setText(f"{path}:build")

    def start_preview(self) -> None:
        """Export to a temporary file and run its replace_convs on the user's model, in a worker."""
        if self._running:
            return
        try:
            ModelRef.parse(self.model_edit.text().strip())
            shape = parse_input(self.input_edit.text())
        except TesseraError as e:
            self._show_status(str(e), "error")
            return
        if not self.kinds():
            self._show_status("Choose at least one kind of convolution to replace.", "error")
            return
        self._set_running(True)
        self._show_status("Replacing the convolutions of your model in a worker process…", "info")
        call = {"request": self._export_request(), "model": self.model_edit.text().strip(), "input_shape": list(shape)}
        self._pool.start(SubprocessCall(PREVIEW_WORKER, call, self._preview_signals, TIMEOUT_S))

    def _previewed(self, lines: list | None, error: str) -> None:
        self._set_running(False)
        if lines is None:
            self._show_status(f"Could not replace the convolutions: {error}", "error")
            return
        self.preview_text.setPlainText("\n".join(lines))
        self._show_status(lines[0] if lines else "", "info")

    def _ended(self, files: list | None, error: str) -> None:
        self._set_running(False)
        if files is None:
            self._show_status(f"Export failed: {error}", "error")
            self.failed.emit(error)
            return
        self._show_status("Wrote " + ", ".join(files), "info")
        self.exported.emit(list(files))
        self.accept()

    def reject(self) -> None:
        if not self._running:  # an export in progress finishes first (it cannot be half-written)
            super().reject()

    def done(self, result: int) -> None:
        self._pool.waitForDone()
        super().done(result)

    # helpers ------------------------------------------------------------------------
    def _set_running(self, running: bool) -> None:
        self._running = running
        for widget in (
            self.format_box,
            self.path_edit,
            self.export_button,
            self.preview_button,
            self.buttons.button(QDialogButtonBox.StandardButton.Cancel),
        ):
            widget.setEnabled(not running)

    def _show_status(self, text: str, severity: str) -> None:
        self.status.setStyleSheet(f"color: {theme.SEVERITY_COLORS[severity]}")
        self.status.setText(text)

    def _path_typed(self) -> None:
        self._path_edited = True

    def _suggest_path(self) -> None:
        """Follow the format with a file named after the operator, until the user types a path."""
        fmt = self.format
        if self._path_edited or fmt is None:
            return
        self.path_edit.setText(str(self._directory / f"{file_stem(self.name)}{FORMATS[fmt].suffix}"))

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export to", self.path_edit.text(), options=QFileDialog.Option.DontConfirmOverwrite
        )
        if path:
            self.set_path(path)
