"""Two results side by side: their operators drawn as graphs, their numbers with the
better one marked, and their PyTorch modules as an aligned side-by-side diff.

The module source comes from core.codegen.to_torch.module_source, which only writes
text (it imports no torch), so it runs here directly."""

from __future__ import annotations

import difflib

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from core.codegen.to_torch import module_source
from core.errors import TesseraError
from core.store import MAXIMIZE

from .. import theme
from ..editor.canvas import OperatorScene, OperatorView
from ..editor.document import OperatorDocument
from ..result_columns import BY_KEY, FIGURES
from .session import ExplorerSession

#: the rows: where each result comes from and at what sizes (its name heads its column), then
#: all that is known of it; the better of two is marked, and their ratio given, for an objective
ROWS = ("origin", "device_name", "bindings", *FIGURES)


def aligned_diff(left: list[str], right: list[str]) -> list[tuple[str | None, str | None]]:
    """Line pairs for a side-by-side diff: equal lines side by side, changed runs padded
    with None so that both columns stay aligned."""
    pairs: list[tuple[str | None, str | None]] = []
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, left, right, autojunk=False).get_opcodes():
        a, b = left[a0:a1], right[b0:b1]
        if tag == "equal":
            pairs += zip(a, b)
        else:
            n = max(len(a), len(b))
            pairs += zip(a + [None] * (n - len(a)), b + [None] * (n - len(b)))
    return pairs


class _GraphCard(QWidget):
    """A read-only drawing of one operator with its name above."""

    def __init__(self, title: str, subtitle: str, document: OperatorDocument, parent=None):
        super().__init__(parent)
        heading = QLabel(title)
        heading.setObjectName("inspectorTitle")
        note = QLabel(subtitle)
        note.setObjectName("inspectorDoc")
        note.setWordWrap(True)
        self.scene = OperatorScene(self)
        self.scene.set_document(document)
        self.view = OperatorView(self.scene)
        self.view.setInteractive(False)
        self.view.setAcceptDrops(False)
        self.view.setDragMode(OperatorView.DragMode.NoDrag)
        self.view.request_fit()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(heading)
        layout.addWidget(note)
        layout.addWidget(self.view, 1)


class CompareDialog(QDialog):
    def __init__(self, session: ExplorerSession, ids: tuple[int, int], parent=None):
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.ids = ids
        rows = session.rows(ids)
        missing = [i for i in ids if i not in rows]
        if missing:
            raise TesseraError(f"result {missing[0]} is no longer in {session.path}")
        self.rows = [rows[i] for i in ids]
        self.graphs = [session.result_graph(i) for i in ids]
        self.names = [r["operator_name"] or f"operator {r['operator_id']}" for r in self.rows]
        self.setWindowTitle(f"Compare {self.names[0]} and {self.names[1]}")

        self.documents = [OperatorDocument(g, parent=self) for g in self.graphs]
        graphs = QSplitter(Qt.Orientation.Horizontal)
        self.cards = []
        for name, row, document in zip(self.names, self.rows, self.documents):
            subtitle = " · ".join(
                filter(
                    None,
                    (
                        row["origin"],
                        row["device_name"],
                        BY_KEY["bindings"].text(row["bindings"]),
                        f"result {row['result_id']}",
                    ),
                )
            )
            card = _GraphCard(name, subtitle, document)
            self.cards.append(card)
            graphs.addWidget(card)

        self.numbers = self._numbers_table()
        self.diff = self._diff_view()
        tabs = QTabWidget()
        tabs.setDocumentMode(True)
        tabs.addTab(self.numbers, "Numbers")
        tabs.addTab(self.diff, "PyTorch diff")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(graphs)
        splitter.addWidget(tabs)
        splitter.setSizes([330, 380])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.resize(1200, 780)

    # -- numbers -------------------------------------------------------------------------
    def _numbers_table(self) -> QTableWidget:
        table = QTableWidget(len(ROWS), 3)
        table.setHorizontalHeaderLabels([*self.names, f"{self.names[1]} ÷ {self.names[0]}"])
        table.setVerticalHeaderLabels([BY_KEY[k].title for k in ROWS])
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setAlternatingRowColors(True)
        table.horizontalHeader().setStretchLastSection(True)
        for side in range(2):
            table.setColumnWidth(side, 260)
        for r, key in enumerate(ROWS):
            column = BY_KEY[key]
            values = [row[key] for row in self.rows]
            better = self._better(key, values)
            for c, value in enumerate(values):
                item = QTableWidgetItem(column.text(value) if value is not None else "—")
                if c == better:
                    item.setForeground(QColor(theme.ACCEPT))
                    font = QFont(item.font())
                    font.setBold(True)
                    item.setFont(font)
                table.setItem(r, c, item)
            if column.direction is not None and all(isinstance(v, (int, float)) and v > 0 for v in values):
                table.setItem(r, 2, QTableWidgetItem(f"{values[1] / values[0]:.3g}×"))
        return table

    @staticmethod
    def _better(key: str, values: list) -> int | None:
        direction = BY_KEY[key].direction
        if direction is None or key == "trial_count" or None in values or values[0] == values[1]:
            return None
        best = max(values) if direction == MAXIMIZE else min(values)
        return values.index(best)

    # -- code ------------------------------------------------------------------------------
    def sources(self) -> list[str]:
        """Each operator's PyTorch module at its result's bindings, or why there is none."""
        texts = []
        for graph, name in zip(self.graphs, self.names):
            try:
                texts.append(module_source(graph, graph.bindings))
            except TesseraError as e:
                texts.append(f"# no PyTorch module for {name}: {e}")
        return texts

    def _diff_view(self) -> QWidget:
        left, right = self.sources()
        self.pairs = aligned_diff(left.splitlines(), right.splitlines())
        panel = QWidget()
        grid = QGridLayout(panel)
        grid.setContentsMargins(0, 4, 0, 0)
        self.editors = []
        for column, (name, side, mark) in enumerate(
            zip(self.names, (0, 1), (theme.COLORS["diff_removed"], theme.COLORS["diff_added"]))
        ):
            label = QLabel(name)
            label.setObjectName("barLabel")
            editor = QPlainTextEdit("\n".join(p[side] or "" for p in self.pairs))
            editor.setReadOnly(True)
            editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            editor.setFont(theme.mono_font(9))
            editor.setExtraSelections(self._marks(editor, side, mark))
            grid.addWidget(label, 0, column)
            grid.addWidget(editor, 1, column)
            self.editors.append(editor)
        a, b = (e.verticalScrollBar() for e in self.editors)
        a.valueChanged.connect(b.setValue)
        b.valueChanged.connect(a.setValue)
        return panel

    def _marks(self, editor: QPlainTextEdit, side: int, mark: str) -> list:
        selections = []
        block = editor.document().firstBlock()
        for pair in self.pairs:
            if pair[0] != pair[1]:
                selection = QTextEdit.ExtraSelection()
                selection.format.setBackground(QColor(theme.COLORS["diff_blank"] if pair[side] is None else mark))
                selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                selection.cursor = QTextCursor(block)
                selections.append(selection)
            block = block.next()
        return selections

    def changed_lines(self) -> int:
        return sum(1 for a, b in self.pairs if a != b)

    def done(self, result: int) -> None:
        for card in self.cards:
            card.scene.detach()
        super().done(result)
