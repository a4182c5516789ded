"""The diagnostics panel: every error, warning and pending dynamic variable of the
operator, one row each; clicking a row selects its node on the canvas. A dynamic variable
still to choose (an fc's out=x1) lists its valid values as buttons: one click chooses."""

from __future__ import annotations

from PySide6.QtCore import QMargins, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QToolButton, QTreeWidget, QTreeWidgetItem, QWidget

from core.analysis.summary import Summary

from .. import theme

NODE_ROLE = Qt.ItemDataRole.UserRole
FIX_COLUMN = 3
ITEM_PADDING = 3  # px above and below a row's content (QTreeView::item in style.qss): item widgets sit inside it
MAX_ROWS_SHOWN = 6  # the panel asks for room for this many rows at most (more scroll)


class DiagnosticsPanel(QTreeWidget):
    nodeActivated = Signal(str)
    valueChosen = Signal(str, str)  # a dynamic variable and the value picked for it

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(4)
        self.setHeaderLabels(["", "node", "message", "fix"])
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(False)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.header().setStretchLastSection(True)
        self.setColumnWidth(0, 92)
        self.setColumnWidth(1, 130)
        self.setColumnWidth(2, 520)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)

    def show_summary(self, summary: Summary) -> None:
        self.clear()
        report = summary.shapes
        rows: list[tuple[str, str, str, tuple[str, tuple[str, ...]] | None]] = [
            (d.severity, d.node, d.message, None) for d in report.diagnostics
        ]
        rows += [
            ("pending", c.node, f"{c.reason}: choose {c.var}", (c.var, tuple(map(str, c.candidates))))
            for c in report.constraints
        ]
        if summary.binding_error:
            where = ", ".join(f"{v}=…" for v in summary.unbound)
            hint = f": type {where} in the Bindings bar" if summary.unbound else ""
            rows.append(("error", summary.binding_node or "", f"bindings: {summary.binding_error}{hint}", None))
        order = {"error": 0, "warning": 1, "pending": 2}
        for severity, node, message, choice in sorted(rows, key=lambda r: order.get(r[0], 3)):
            item = QTreeWidgetItem([severity, node, message])
            item.setIcon(0, theme.dot_icon(theme.SEVERITY_COLORS[severity]))
            item.setData(0, NODE_ROLE, node)
            item.setToolTip(2, message)
            self.addTopLevelItem(item)
            if choice is not None:
                buttons = self._choice_buttons(*choice)
                buttons.ensurePolished()  # styled first: the row grows to hold the buttons whole
                item.setSizeHint(FIX_COLUMN, buttons.sizeHint().grownBy(QMargins(0, ITEM_PADDING, 0, ITEM_PADDING)))
                self.setItemWidget(item, FIX_COLUMN, buttons)
        self.setColumnHidden(FIX_COLUMN, not report.constraints)
        if not rows:
            item = QTreeWidgetItem(["ok", "", "No problems: every shape checks out."])
            item.setIcon(0, theme.dot_icon(theme.ACCEPT))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.addTopLevelItem(item)

    def content_height(self) -> int:
        """The height that shows every row (up to MAX_ROWS_SHOWN) and the header: one line of
        "No problems" asks for one row's room, not a fixed share of the window."""
        self.ensurePolished()  # asked before it first shows: its style sheet's paddings count
        self.header().ensurePolished()
        line = self.fontMetrics().height()
        rows = self._rows()[:MAX_ROWS_SHOWN]
        least = max(self.sizeHintForRow(0), line + 2 * ITEM_PADDING + 4)
        body = sum(max(self.visualItemRect(item).height(), least) for item in rows)
        header = 0 if self.isHeaderHidden() else max(self.header().sizeHint().height(), line + 12)
        return header + body + 2 * self.frameWidth() + 2

    def _choice_buttons(self, var: str, values: tuple[str, ...]) -> QWidget:
        box = QWidget()
        layout = QHBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        for value in values:
            button = QToolButton()
            button.setText(f"{var} = {value}")
            button.setToolTip(f"Use {value} for {var} wherever the operator uses {var} (undoable)")
            button.setProperty("choice", True)  # drawn as a button (a plain QToolButton reads as text here)
            button.clicked.connect(lambda _=False, v=value: self.valueChosen.emit(var, v))
            layout.addWidget(button)
        layout.addStretch(1)
        return box

    def choices(self) -> dict[str, list[QToolButton]]:
        """Variable -> its candidate buttons, for tests."""
        out: dict[str, list[QToolButton]] = {}
        for item in self._rows():
            widget = self.itemWidget(item, FIX_COLUMN)
            for button in widget.findChildren(QToolButton) if widget is not None else ():
                out.setdefault(button.text().split(" = ")[0], []).append(button)
        return out

    def messages(self) -> list[tuple[str, str, str]]:
        """(severity, node, message) per row, for tests and the status bar."""
        return [(item.text(0), item.text(1), item.text(2)) for item in self._rows()]

    def _rows(self) -> list[QTreeWidgetItem]:
        return [item for i in range(self.topLevelItemCount()) if (item := self.topLevelItem(i)) is not None]

    def _clicked(self, item: QTreeWidgetItem) -> None:
        node = item.data(0, NODE_ROLE)
        if node:
            self.nodeActivated.emit(node)
