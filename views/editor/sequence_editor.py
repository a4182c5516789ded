"""The transformation-sequence editor: steps with their parameters, a legality badge and
explanation per step, the loop nest after the selected step, and undo/redo.

A thin view over core: edits go through core.ir.sequence.SequenceHistory (one undo step
each) and every change re-runs core.codegen.loopnest_ir.checked_sequence (pure Python, a few
milliseconds), so badges are always current. Fisher Potential and compiling belong to
"Evaluate" and "Tune" on the result: `openOperator` hands the resulting operator document
to the window, which opens it like a drawn operator."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.analysis.legality import ERROR, ILLEGAL, LEGAL, SequenceReport
from core.codegen.loopnest_ir import checked_sequence, result_operator
from core.codegen.loopnest_text import program_text
from core.errors import TesseraError
from core.ir.bindings import format_bindings, parse_bindings
from core.ir.loopnest import BASES
from core.ir.sequence import (
    STEP_DOCS,
    STEP_PARAMS,
    Sequence,
    SequenceHistory,
    load_sequence,
    make_step,
    save_sequence,
    suggest_step,
)
from core.ir.serialize import to_document

from .. import theme

BADGE_COLORS = {LEGAL: theme.ACCEPT, ILLEGAL: theme.SEVERITY_COLORS["error"], ERROR: theme.SEVERITY_COLORS["warning"]}
BADGE_WORDS = {LEGAL: "legal", ILLEGAL: "illegal", ERROR: "cannot apply"}
_ORIGINAL_ROW = Qt.ItemDataRole.UserRole


class SequenceEditor(QWidget):
    changed = Signal()  # the sequence, its verdicts or the selection changed
    openOperator = Signal(dict)  # a tessera.operator document of the result (to tune or evaluate it)

    def __init__(self, sequence: Sequence | None = None, parent=None):
        super().__init__(parent)
        self.path: Path | None = None
        self.history = SequenceHistory(
            sequence or Sequence(bindings={"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3}), self._refresh
        )
        self._saved = self.history.current  # the sequence as last opened or saved (modified: it differs)
        self.report: SequenceReport | None = None
        self.problem = ""  # why the starting nest cannot be built (sizes missing), if so
        self._build()
        self._refresh()

    # -- the model, for the window and for scripts ----------------------------------------
    @property
    def sequence(self) -> Sequence:
        return self.history.current

    def load(self, path: str | Path) -> None:
        """Open a sequence file (TesseraError if it is not one); the history starts afresh."""
        self.show_sequence(load_sequence(path), Path(path))

    def show_sequence(self, seq: Sequence, path: Path | None = None) -> None:
        """Edit `seq` (read from `path`, or from elsewhere: a search's result); the history starts afresh."""
        self.path = path
        self.history = SequenceHistory(seq, self._refresh)
        self._saved = seq
        self._refresh()

    def save(self, path: str | Path | None = None) -> None:
        """Write the sequence to `path` (default: its file); OSError if it cannot be written."""
        target = Path(path) if path else self.path
        if target is None:
            raise ValueError("save() needs a path for a sequence that was never saved")
        save_sequence(self.sequence, target)
        self.path, self._saved = target, self.sequence
        self.changed.emit()

    @property
    def modified(self) -> bool:
        return self.sequence != self._saved

    @property
    def display_name(self) -> str:
        """The file's name, else the sequence's, else Untitled sequence."""
        return self.path.name if self.path else self.sequence.name or "Untitled sequence"

    def add_step(self, op: str) -> None:
        """Insert a step after the selected one, with parameters that fit the nest there."""
        row = self.selected_row()
        index = len(self.sequence.steps) if row < 0 else row + 1
        nest = self._program_before(index).parts[0]
        self.history.insert(index, suggest_step(op, nest))
        self.select(index)

    def remove_step(self, row: int | None = None) -> None:
        row = self.selected_row() if row is None else row
        if 0 <= row < len(self.sequence.steps):
            self.history.remove(row)
            self.select(min(row, len(self.sequence.steps) - 1))

    def move_step(self, source: int, target: int) -> None:
        if source != target and 0 <= target < len(self.sequence.steps):
            self.history.move(source, target)
            self.select(target)

    def edit_step(self, row: int, params: dict, part: int | None) -> None:
        """Replace a step's parameters (FormatError if they are not well-formed)."""
        step = self.sequence.steps[row]
        self.history.replace(row, make_step(step.op, params, part))
        self.select(row)

    def undo(self) -> None:
        self.history.undo()

    def redo(self) -> None:
        self.history.redo()

    def selected_row(self) -> int:
        return self.steps.currentRow()

    def select(self, row: int) -> None:
        self.steps.setCurrentRow(row)

    def result_document(self) -> dict | None:
        """The resulting operator as a tessera.operator document (None if there is none yet)."""
        final = self.report.final if self.report and not self.report.operator_problem else None
        return to_document(result_operator(final, self.result_name).graph) if final else None

    @property
    def result_name(self) -> str:
        """The name the resulting operator goes by: the sequence's, else its file's."""
        return self.sequence.name or (self.path.stem if self.path else "sequence")

    def why_no_result(self) -> str | None:
        """Why the sequence has no operator to evaluate yet (None when it has one)."""
        if self.report is None:
            return self.problem or "the starting loop nest cannot be built"
        if self.report.final is None:
            return "a step cannot be applied (see its badge)"
        return self.report.operator_problem or None

    # -- building the widgets ---------------------------------------------------------------
    def _build(self) -> None:
        self.nest_box = QComboBox()
        for name, base in BASES.items():
            self.nest_box.addItem(name, name)
            self.nest_box.setItemData(self.nest_box.count() - 1, base.description, Qt.ItemDataRole.ToolTipRole)
        self.nest_box.activated.connect(lambda: self.history.declare(nest=self.nest_box.currentData()))
        self.sizes = QLineEdit()
        self.sizes.setPlaceholderText("C_in=64,C_out=64,H=56,W=56,K=3")
        self.sizes.editingFinished.connect(self._sizes_edited)
        self.reassociate = QCheckBox("Reassociate sums")
        self.reassociate.setToolTip(
            "Let reorders change the order in which a sum is accumulated "
            "(equal up to rounding); parallel/vectorize still may not race."
        )
        self.reassociate.toggled.connect(lambda on: self.history.declare(reassociate=on))
        header = QHBoxLayout()
        header.addWidget(QLabel("Nest"))
        header.addWidget(self.nest_box)
        header.addWidget(QLabel("Sizes"))
        header.addWidget(self.sizes, 1)
        header.addWidget(self.reassociate)

        self.steps = QListWidget()
        self.steps.setObjectName("sequenceSteps")
        self.steps.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.steps.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.steps.currentRowChanged.connect(self._selection_changed)
        self.steps.model().rowsMoved.connect(self._rows_dragged)

        menu = QMenu(self)
        self.add_actions: dict[str, QAction] = {}
        for op in STEP_PARAMS:
            action = menu.addAction(op, partial(self.add_step, op))
            action.setToolTip(STEP_DOCS[op])
            self.add_actions[op] = action
        menu.setToolTipsVisible(True)
        self.add_button = self._tool("Add step", "Add a step after the selected one")
        self.add_button.setMenu(menu)
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.remove_button = self._tool("Remove", "Remove the selected step", lambda: self.remove_step())
        self.up_button = self._tool(
            "Up", "Move the selected step earlier", lambda: self.move_step(self.selected_row(), self.selected_row() - 1)
        )
        self.down_button = self._tool(
            "Down", "Move the selected step later", lambda: self.move_step(self.selected_row(), self.selected_row() + 1)
        )
        self.undo_button = self._tool("Undo", "", self.undo)
        self.redo_button = self._tool("Redo", "", self.redo)
        self.open_button = self._tool(
            "Open result", "Open the resulting operator to tune or evaluate it", self._open_result
        )
        buttons = QHBoxLayout()
        for b in (
            self.add_button,
            self.remove_button,
            self.up_button,
            self.down_button,
            self.undo_button,
            self.redo_button,
        ):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)

        self.params_box = QGroupBox("Step")
        self.params = QFormLayout(self.params_box)
        self.fields: dict[str, QLineEdit] = {}
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.explanation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.steps, 1)
        column.addLayout(buttons)
        column.addWidget(self.params_box)
        column.addWidget(self.explanation)

        self.nest_title = QLabel()
        self.nest_title.setWordWrap(True)
        self.nest_view = QPlainTextEdit()
        self.nest_view.setReadOnly(True)
        self.nest_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.nest_view.setFont(theme.mono_font(9))
        self.totals = QLabel()
        self.totals.setWordWrap(True)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.nest_title)
        column.addWidget(self.nest_view, 1)
        column.addWidget(self.totals)

        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(split, 1)

    def _tool(self, text: str, tip: str, slot=None) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        if slot is not None:
            button.clicked.connect(slot)
        return button

    # -- refreshing from the model ------------------------------------------------------------
    def _refresh(self) -> None:
        seq = self.sequence
        try:
            self.report, self.problem = checked_sequence(seq), ""
        except TesseraError as e:
            self.report, self.problem = None, str(e)
        self.nest_box.setCurrentIndex(self.nest_box.findData(seq.nest))
        self.sizes.setText(format_bindings(dict(seq.bindings)))
        self.reassociate.blockSignals(True)
        self.reassociate.setChecked(seq.reassociate)
        self.reassociate.blockSignals(False)
        row = self.selected_row()
        # update items in place (never clear the list: this may run inside a drop)
        while self.steps.count() > len(seq.steps):
            self.steps.takeItem(self.steps.count() - 1)
        while self.steps.count() < len(seq.steps):
            self.steps.addItem(QListWidgetItem())
        for i, step in enumerate(seq.steps):
            item = self.steps.item(i)
            status, message = self.verdict(i)
            item.setText(f"{i + 1}. {step.text()}")
            item.setData(_ORIGINAL_ROW, i)
            item.setIcon(theme.dot_icon(BADGE_COLORS.get(status, theme.TEXT_MUTED)))
            item.setToolTip(f"{BADGE_WORDS.get(status, status)}: {message}")
            item.setForeground(QColor(theme.TEXT if status == LEGAL else BADGE_COLORS.get(status, theme.TEXT_MUTED)))
        self.undo_button.setEnabled(bool(self.history.undo_text))
        self.undo_button.setToolTip(f"Undo {self.history.undo_text}".strip())
        self.redo_button.setEnabled(bool(self.history.redo_text))
        self.redo_button.setToolTip(f"Redo {self.history.redo_text}".strip())
        self.add_button.setEnabled(self.report is not None)
        self._show_totals()
        self._selection_changed(min(row, len(seq.steps) - 1))

    def verdict(self, row: int) -> tuple[str, str]:
        """(status, explanation) of a step: legal, illegal, error, or "not reached"."""
        reports = self.report.steps if self.report else []
        if row < len(reports):
            return reports[row].status, reports[row].message
        return "not reached", self.problem or "an earlier step cannot be applied"

    def _selection_changed(self, row: int) -> None:
        has = 0 <= row < len(self.sequence.steps)
        for b in (self.remove_button, self.up_button, self.down_button):
            b.setEnabled(has)
        self._show_params(row if has else -1)
        if self.report is None:
            self.nest_title.setText("Loop nest")
            self.nest_view.setPlainText(self.problem)
        else:  # the nest after the selected step; with none selected, after the whole sequence
            reached = [s for s in self.report.steps[: row + 1 if has else None] if s.after is not None]
            program = reached[-1].after if reached else self.report.start
            assert program is not None  # the steps kept have a nest after them
            last = reached[-1].index + 1 if reached else 0
            if has or not reached:
                title = f"Loop nest after step {last}" if reached else "Loop nest before any step"
            elif last == len(self.sequence.steps):
                steps = f"all {last} steps" if last > 1 else "its step"
                title = f"Loop nest after {steps} (select one to see the nest there)"
            else:
                title = f"Loop nest after step {last}, the last that applies"
            self.nest_title.setText(title)
            self.nest_view.setPlainText(program_text(program))
        if has:
            status, message = self.verdict(row)
            color = BADGE_COLORS.get(status, theme.TEXT_MUTED)
            self.explanation.setText(
                f'<b style="color:{color}">{BADGE_WORDS.get(status, status)}</b>: {_escape(message)}'
            )
        else:
            self.explanation.setText(self.problem)
        self.changed.emit()

    def _show_params(self, row: int) -> None:
        while self.params.rowCount():
            self.params.removeRow(0)
        self.fields = {}
        if row < 0:
            self.params_box.setTitle("Step")
            return
        step = self.sequence.steps[row]
        # the step's name in the title, what it does wrapped below: a title as long as the
        # description widened the whole column with each step selected
        self.params_box.setTitle(step.op)
        doc = QLabel(STEP_DOCS[step.op])
        doc.setObjectName("hint")
        doc.setWordWrap(True)
        self.params.addRow(doc)
        for name, kind in STEP_PARAMS[step.op].items():
            value = step.params[name]
            field = QLineEdit(", ".join(map(str, value)) if isinstance(value, tuple) else str(value))
            field.setToolTip(
                "loop names separated by commas"
                if kind in ("loops", "pair")
                else "factors separated by commas"
                if kind == "sizes"
                else "a loop name"
                if kind == "loop"
                else "a whole number or a size such as G"
            )
            field.editingFinished.connect(lambda row=row: self._params_edited(row))
            self.params.addRow(name, field)
            self.fields[name] = field
        part = QLineEdit("" if step.part is None else str(step.part))
        part.setPlaceholderText("every part")
        part.editingFinished.connect(lambda row=row: self._params_edited(row))
        self.params.addRow("part", part)
        self.fields["part"] = part
        program = self._program_before(row)
        if program is not None:
            names = " | ".join(", ".join(n.names) for n in program.parts)
            hint = QLabel(f"loops here: {names}")
            hint.setObjectName("hint")
            hint.setWordWrap(True)
            self.params.addRow(hint)

    def _show_totals(self) -> None:
        report = self.report
        final = report.final if report else None
        if report is None or final is None:
            self.totals.setText("No result: a step cannot be applied." if report else self.problem)
            self.open_button.setEnabled(False)
            return
        if report.operator_problem:
            self.totals.setText(f"No result: the resulting operator cannot be built: {report.operator_problem}")
            self.open_button.setEnabled(False)
            return
        op = result_operator(final, self.result_name)
        base = result_operator(report.start).totals()
        t = op.totals()
        parts = f" ({len(op.graphs)} parts joined by concat)" if len(op.graphs) > 1 else ""
        self.totals.setText(
            f"Result{parts}: {t['flops']:,} FLOPs ({t['flops'] / base['flops']:.0%} of the start), "
            f"{t['params']:,} parameters ({t['params'] / base['params']:.0%})"
            + ("" if report.legal else "; some steps are illegal")
        )
        self.open_button.setEnabled(True)

    def _program_before(self, index: int):
        if self.report is None:
            return None
        if index == 0:
            return self.report.start
        reports = self.report.steps
        return reports[index - 1].after if index - 1 < len(reports) else None

    # -- user edits ------------------------------------------------------------------------------
    def _sizes_edited(self) -> None:
        try:
            bindings = parse_bindings(self.sizes.text())
        except TesseraError as e:
            self.explanation.setText(_escape(str(e)))
            return
        if bindings != dict(self.sequence.bindings):
            self.history.declare(bindings=bindings)

    def _params_edited(self, row: int) -> None:
        if row >= len(self.sequence.steps) or not self.fields:
            return
        step = self.sequence.steps[row]
        params: dict[str, object] = {}
        for name, kind in STEP_PARAMS[step.op].items():
            text = self.fields[name].text()
            values = [v.strip() for v in text.split(",") if v.strip()]
            if kind in ("loops", "pair", "sizes"):
                params[name] = [_number(v) if kind == "sizes" else v for v in values]
            else:
                params[name] = _number(text.strip()) if kind == "size" else text.strip()
        part_text = self.fields["part"].text().strip()
        try:
            part = int(part_text) if part_text else None
            if (
                params == {k: list(v) if isinstance(v, tuple) else v for k, v in step.params.items()}
                and part == step.part
            ):
                return
            self.edit_step(row, params, part)
        except (TesseraError, ValueError) as e:
            self.explanation.setText(f"<b>not applied</b>: {_escape(str(e))}")

    def _rows_dragged(self, parent: QModelIndex, start: int, end: int, destination: QModelIndex, row: int) -> None:
        """A drag moved one item: read the new order from the items and make it one undo step."""
        order = [self.steps.item(i).data(_ORIGINAL_ROW) for i in range(self.steps.count())]
        source = start
        target = order.index(source)
        self.history.move(source, target)
        self.select(target)

    def _open_result(self) -> None:
        document = self.result_document()
        if document is not None:
            self.openOperator.emit(document)


def _number(text: str):
    return int(text) if text.isdigit() else text


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
