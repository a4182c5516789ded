"""The bindings bar: concrete values for the size variables (C_in=64, ...), so the
canvas can show numbers, FLOPs and parameters next to the symbolic shapes."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QWidget

from core.analysis.summary import Summary
from core.ir.bindings import check_names, parse_bindings
from core.ir.errors import BindingError

from .canvas_labels import totals

MIN_WIDTH, MAX_WIDTH = 200, 520  # px of the field; within them it is as wide as its text
FIELD_SHARE = 0.42  # of the bar's width, the field's at most
TEXT_MARGIN = 28  # px around the text inside the field (padding, border, cursor)


class BindingsBar(QWidget):
    """A refused entry stays in the field, outlined, with the reason in red beside it."""

    bindingsChanged = Signal(dict)

    def __init__(self, known: Callable[[], Iterable[str]] = lambda: (), parent=None):
        """`known()`: the variables the operator has; a binding of any other is refused."""
        super().__init__(parent)
        self.known = known
        self.setObjectName("bindingsBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(8)
        label = QLabel("Bindings")
        label.setObjectName("barLabel")
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("C_in=64, C_out=64, H=56, W=56, K=3")
        self.edit.setToolTip("Values for the size variables; shapes, FLOPs and parameters become numbers.")
        self.edit.setMinimumWidth(MIN_WIDTH)
        self.edit.textChanged.connect(self._fit_text)
        self.totals = QLabel()
        self.totals.setObjectName("totals")
        self.totals.setWordWrap(True)  # on a narrow canvas it takes two lines, never widens the window
        self.error = QLabel()
        self.error.setObjectName("bindingsError")
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(label)
        layout.addWidget(self.edit, 2)
        layout.addWidget(self.error, 3)
        layout.addWidget(self.totals, 3)
        self._shown: dict[str, int] | None = None
        self.edit.editingFinished.connect(self._apply)
        self.edit.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        """Undo in the field takes back the whole entry not yet applied (the line edit's own undo
        took back a keystroke at a time, leaving "G=", refused when focus left)."""
        undo = event.type() in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride) and event.matches(
            QKeySequence.StandardKey.Undo
        )
        if watched is self.edit and undo and self.edit.text() != self._shown_text():
            if event.type() == QEvent.Type.KeyPress:
                self.edit.setText(self._shown_text())
                self.edit.setModified(False)
                self._mark(None)
            event.accept()
            return event.type() == QEvent.Type.KeyPress
        return False

    def _shown_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in (self._shown or {}).items())

    def set_bindings(self, bindings: dict[str, int]) -> None:
        """Show the document's bindings (again only when they changed: an entry being fixed stays)."""
        if bindings == self._shown:
            return
        self._shown = dict(bindings)
        self.edit.setText(self._shown_text())
        self._mark(None)

    def show_summary(self, summary: Summary) -> None:
        self.totals.setText(totals(summary))
        self.totals.setProperty("state", "error" if not summary.ok else "ok")
        self.totals.style().polish(self.totals)

    def _fit_text(self, text: str) -> None:
        """Widen the field to show the whole text, as far as MAX_WIDTH and FIELD_SHARE of the bar
        (the totals give way, down to two lines on a small window; a longer text scrolls)."""
        wanted = self.edit.fontMetrics().horizontalAdvance(text) + TEXT_MARGIN
        room = max(MIN_WIDTH, int(self.width() * FIELD_SHARE))
        self.edit.setMinimumWidth(min(max(MIN_WIDTH, wanted), MAX_WIDTH, room))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_text(self.edit.text())

    def _apply(self) -> None:
        if not self.edit.isModified():  # focus leaving an untouched field changes nothing
            return
        self.edit.setModified(False)
        try:
            bindings = parse_bindings(self.edit.text())
            # names the document binds already stay (a template binds K=3 for the KxK nodes to come)
            check_names(bindings, {*self.known(), *(self._shown or {})}, "the operator")
        except BindingError as e:
            self._mark(str(e))
            return
        self._mark(None)
        self._shown = dict(bindings)
        self.bindingsChanged.emit(bindings)

    def _mark(self, error: str | None) -> None:
        self.edit.setProperty("invalid", error is not None)
        self.edit.setToolTip(error or "Values for the size variables; shapes, FLOPs and parameters become numbers.")
        self.edit.style().polish(self.edit)
        self.error.setText(error or "")
        self.error.setVisible(error is not None)
        self.totals.setVisible(error is None)
