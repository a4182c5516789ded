"""The diagnostics panel: every error, warning and pending dynamic variable of the
operator, one row each; clicking a row selects its node on the canvas."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QTreeWidgetItem

from core.analysis.summary import Summary

from . import theme

NODE_ROLE = Qt.ItemDataRole.UserRole


class DiagnosticsPanel(QTreeWidget):
    nodeActivated = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(3)
        self.setHeaderLabels(["", "node", "message"])
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.header().setStretchLastSection(True)
        self.setColumnWidth(0, 92)
        self.setColumnWidth(1, 130)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)

    def show_summary(self, summary: Summary) -> None:
        self.clear()
        report = summary.shapes
        rows = [(d.severity, d.node, d.message) for d in report.diagnostics]
        rows += [
            ("pending", c.node, f"{c.reason} (candidates: {', '.join(map(str, c.candidates))})")
            for c in report.constraints
        ]
        if summary.binding_error:
            rows.append(("error", "", f"bindings: {summary.binding_error}"))
        order = {"error": 0, "warning": 1, "pending": 2}
        for severity, node, message in sorted(rows, key=lambda r: order.get(r[0], 3)):
            item = QTreeWidgetItem([severity, node, message])
            item.setIcon(0, theme.dot_icon(theme.SEVERITY_COLORS[severity]))
            item.setData(0, NODE_ROLE, node)
            item.setToolTip(2, message)
            self.addTopLevelItem(item)
        if not rows:
            item = QTreeWidgetItem(["ok", "", "No problems: every shape checks out."])
            item.setIcon(0, theme.dot_icon(theme.ACCEPT))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.addTopLevelItem(item)

    def messages(self) -> list[tuple[str, str, str]]:
        """(severity, node, message) per row, for tests and the status bar."""
        return [tuple(self.topLevelItem(i).text(c) for c in range(3)) for i in range(self.topLevelItemCount())]

    def _clicked(self, item: QTreeWidgetItem) -> None:
        node = item.data(0, NODE_ROLE)
        if node:
            self.nodeActivated.emit(node)
