"""The primitive palette: every registered primitive, grouped by family and
category, searchable, with a tooltip explaining each. Dragging one out carries
its op name as MIME data, which the canvas accepts as a drop."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QMimeData, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QDrag, QPainter, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from core.ir.primitives import REGISTRY, Primitive

from .. import theme

MIME_TYPE = "application/x-tessera-primitive"
OP_ROLE = Qt.ItemDataRole.UserRole
FAMILIES = (
    ("canvas", "Canvas", "tensor-level primitives"),
    ("syno", "Syno", "coordinate-level primitives"),
    ("tessera", "Tessera", "joins the published sets lack"),
)
CATEGORIES = ("rearrangement", "view", "arithmetic", "contraction", "blending")
KIND_NAMES = {"dim": "axis", "dims": "axes", "size": "size expression", "int": "integer", "choice": "choice"}
#: what people search for, by what a primitive does (the layers it builds, other names for it)
SEARCH_TERMS = {
    "fc": "conv convolution pointwise 1x1 linear dense matmul grouped depthwise weight channel mixing",
    "share": "conv convolution weight contraction einsum multiply kernel",
    "unfold": "conv convolution window sliding im2col neighbourhood kernel patch",
    "reduce": "sum conv convolution contraction aggregate",
    "fold": "pool pooling average mean max global",
    "stride": "pool pooling downsample subsample",
    "softmax": "attention normalise probability",
    "broadcast": "attention gate gating add residual multiply scale",
    "elementwise": "activation relu gelu sigmoid tanh nonlinearity",
    "group": "grouped channels heads split reshape",
    "split": "reshape blocks tile",
    "merge": "reshape flatten",
    "shift": "roll translate shiftnet",
    "expand": "repeat upsample broadcast",
    "concat": "join inception mixed cat",
}


def primitive_from_mime(mime: QMimeData | None) -> str | None:
    """The op a palette drag carries, or None for anything else (unknown ops included)."""
    if mime is None or not mime.hasFormat(MIME_TYPE):
        return None
    op = bytes(mime.data(MIME_TYPE).data()).decode("utf-8", "replace")
    return op if op in REGISTRY else None


def primitive_tooltip(cls: type[Primitive]) -> str:
    families = ", ".join(name for key, name, _ in FAMILIES if key in cls.families)
    params = "".join(
        f"<li><b>{escape(p.name)}</b> ({KIND_NAMES[p.kind]}"
        + (f": {', '.join(p.choices)}" if p.choices else "")
        + f") — {escape(p.doc)}</li>"
        for p in cls.spec
    )
    ports = f"<br>inputs: {', '.join(cls.ports)}" if len(cls.ports) > 1 else ""
    return (
        f"<b>{escape(cls.title)}</b> &nbsp;<code>{cls.op}</code><br>{escape(cls.doc)}"
        f"<br><span style='color:{theme.TEXT_MUTED}'>{families} · {cls.category}</span>{ports}"
        + (f"<ul style='margin-left:-20px'>{params}</ul>" if params else "")
    )


class _PaletteTree(QTreeWidget):
    """A tree whose drags carry a primitive (built by the palette) and show a small card."""

    def __init__(self, palette: PrimitivePalette):
        super().__init__()
        self._palette = palette
        self.setHeaderHidden(True)
        self.setRootIsDecorated(True)
        self.setIndentation(14)
        self.setUniformRowHeights(True)
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)

    def mimeTypes(self) -> list[str]:
        return [MIME_TYPE]

    def startDrag(self, actions) -> None:
        item = self.currentItem()
        op = item.data(0, OP_ROLE) if item is not None else None
        if not op:
            return
        drag = QDrag(self)
        drag.setMimeData(self._palette.mime_data(op))
        drag.setPixmap(_drag_pixmap(REGISTRY[op]))
        drag.setHotSpot(drag.pixmap().rect().center() / drag.pixmap().devicePixelRatio())
        drag.exec(Qt.DropAction.CopyAction)


class PrimitivePalette(QWidget):
    primitiveActivated = Signal(str)  # double-click or Enter: add at the canvas centre

    def __init__(self, parent=None):
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search primitives…")
        self.search.setClearButtonEnabled(True)
        self.tree = _PaletteTree(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        layout.addWidget(self.search)
        layout.addWidget(self.tree)
        self._build()
        self.search.textChanged.connect(self.filter)
        self.tree.itemActivated.connect(self._activated)

    def _build(self) -> None:
        for family, name, blurb in FAMILIES:
            top = QTreeWidgetItem([name])
            top.setToolTip(0, f"{name}: {blurb}")
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            self.tree.addTopLevelItem(top)
            for category in CATEGORIES:
                members = sorted(
                    (c for c in REGISTRY.values() if family in c.families and c.category == category),
                    key=lambda c: c.title,
                )
                if not members:
                    continue
                group = QTreeWidgetItem(top, [category.capitalize()])
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                group.setIcon(0, theme.dot_icon(theme.CATEGORY_COLORS[category]))
                for cls in members:
                    leaf = QTreeWidgetItem(group, [cls.title])
                    leaf.setData(0, OP_ROLE, cls.op)
                    leaf.setToolTip(0, primitive_tooltip(cls))
                    leaf.setFlags(
                        Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled
                    )
        self.tree.expandAll()

    def mime_data(self, op: str) -> QMimeData:
        mime = QMimeData()
        mime.setData(MIME_TYPE, op.encode("utf-8"))
        mime.setText(op)
        return mime

    def items_for(self, op: str) -> list[QTreeWidgetItem]:
        return [item for item in self._leaves() if item.data(0, OP_ROLE) == op]

    def filter(self, text: str) -> None:
        """Show the primitives whose name, category, description or usual names (SEARCH_TERMS)
        contain every word typed. A primitive in two families (Shift, Unfold) is listed once while
        searching, named with its families."""
        words = text.lower().split()
        seen: set[str] = set()
        for leaf in self._leaves():
            op = leaf.data(0, OP_ROLE)
            cls = REGISTRY[op]
            haystack = " ".join((cls.title, cls.op, cls.category, cls.doc, SEARCH_TERMS.get(op, ""))).lower()
            match = all(word in haystack for word in words) and not (words and op in seen)
            leaf.setHidden(not match)
            if match:
                seen.add(op)
            names = [name for key, name, _ in FAMILIES if key in cls.families]
            leaf.setText(0, f"{cls.title} ({', '.join(names)})" if words and len(names) > 1 else cls.title)
        for top in _children(self.tree.invisibleRootItem()):
            for group in _children(top):
                group.setHidden(all(leaf.isHidden() for leaf in _children(group)))
            top.setHidden(all(group.isHidden() for group in _children(top)))
        self.tree.expandAll()

    def visible_ops(self) -> list[str]:
        return sorted({leaf.data(0, OP_ROLE) for leaf in self._leaves() if not _hidden(leaf)})

    def _leaves(self) -> list[QTreeWidgetItem]:
        """The primitives, under their family and group."""
        root = self.tree.invisibleRootItem()
        return [leaf for top in _children(root) for group in _children(top) for leaf in _children(group)]

    def _activated(self, item: QTreeWidgetItem) -> None:
        op = item.data(0, OP_ROLE)
        if op:
            self.primitiveActivated.emit(op)


def _children(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [child for i in range(item.childCount()) if (child := item.child(i)) is not None]


def _hidden(item: QTreeWidgetItem | None) -> bool:
    while item is not None:
        if item.isHidden():
            return True
        item = item.parent()
    return False


def _drag_pixmap(cls: type[Primitive]) -> QPixmap:
    """A miniature node card to carry under the cursor."""
    font = theme.ui_font(9, bold=True)
    width, height, ratio = 140, 30, 2.0
    pixmap = QPixmap(int(width * ratio), int(height * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(theme.category_color(cls.category))
    painter.drawRoundedRect(QRectF(1, 1, width - 2, height - 2), 6, 6)
    painter.setFont(font)
    painter.setPen(QColor("#ffffff"))
    painter.drawText(QRectF(QPointF(10, 0), QPointF(width - 10, height)), Qt.AlignmentFlag.AlignVCenter, cls.title)
    painter.end()
    return pixmap
