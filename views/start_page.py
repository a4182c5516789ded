"""The start page: where the window opens when no file is given. Three ways in, each one
click: a new operator from a template that already validates, a bundled example, a recent
file; and the three steps of the work (build, bind, evaluate) in one line each."""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QPainter, QTextDocument
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from . import theme
from .editor.document import TEMPLATES

PATH_ROLE = Qt.ItemDataRole.UserRole
STEPS = (
    ("Build", "drag primitives from the palette onto the canvas and connect an output port to an input port."),
    ("Bind", "type sizes in the Bindings bar (C_in=64, ...): shapes, FLOPs and parameters become numbers."),
    ("Evaluate", "Run > Evaluate (Ctrl+R) compiles the operator with TVM and times it beside PyTorch."),
)


class StartPage(QScrollArea):
    templateChosen = Signal(str)  # a key of views.editor.document.TEMPLATES
    fileChosen = Signal(str)  # an example or a recent file
    openRequested = Signal()  # File > Open...

    def __init__(self, examples: Path, parent=None):
        super().__init__(parent)
        self.setObjectName("startPage")
        self.setWidgetResizable(True)
        body = QWidget()
        body.setObjectName("startBody")
        outer = QVBoxLayout(body)
        outer.setContentsMargins(48, 36, 48, 36)
        outer.setSpacing(14)
        title = QLabel("Welcome to Tessera")
        title.setObjectName("startTitle")
        blurb = QLabel(
            "Design neural operators from fine-grained primitives, see their shapes checked as you edit, "
            "tune them with TVM and find the ones faster than convolution."
        )
        blurb.setObjectName("startBlurb")
        blurb.setWordWrap(True)
        outer.addWidget(title)
        outer.addWidget(blurb)

        grid = QGridLayout()
        grid.setHorizontalSpacing(28)
        grid.setVerticalSpacing(8)
        self.templates = self._list(((f"{name}\n{text}", key) for key, (name, text) in TEMPLATES.items()))
        self.examples = self._list(_examples(examples))
        self.recent = self._list(())
        for column, (heading, widget) in enumerate(
            (("New operator", self.templates), ("Examples", self.examples), ("Recent files", self.recent))
        ):
            label = QLabel(heading)
            label.setObjectName("startHeading")
            grid.addWidget(label, 0, column)
            grid.addWidget(widget, 1, column)
            grid.setColumnStretch(column, 1)
        self.open_button = QPushButton("Open a file…")
        grid.addWidget(self.open_button, 2, 2, Qt.AlignmentFlag.AlignLeft)
        outer.addLayout(grid, 1)

        steps = QLabel("<br>".join(f"<b>{i}. {name}:</b> {text}" for i, (name, text) in enumerate(STEPS, 1)))
        steps.setObjectName("startSteps")
        steps.setWordWrap(True)
        outer.addWidget(steps)
        self.setWidget(body)

        self.templates.itemActivated.connect(lambda item: self.templateChosen.emit(item.data(PATH_ROLE)))
        self.templates.itemClicked.connect(lambda item: self.templateChosen.emit(item.data(PATH_ROLE)))
        for files in (self.examples, self.recent):
            files.itemActivated.connect(self._file)
            files.itemClicked.connect(self._file)
        self.open_button.clicked.connect(self.openRequested)

    def set_recent(self, paths: Iterable[str]) -> None:
        self.recent.clear()
        for path in paths:
            item = QListWidgetItem(f"{Path(path).name}\n{Path(path).parent}")
            item.setData(PATH_ROLE, path)
            item.setToolTip(path)
            if not Path(path).exists():
                item.setFlags(Qt.ItemFlag.NoItemFlags)
                item.setText(f"{Path(path).name}\n(moved or deleted)")
            self.recent.addItem(item)
        if not self.recent.count():
            empty = QListWidgetItem("\nFiles you open appear here.")
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.recent.addItem(empty)

    def _file(self, item: QListWidgetItem) -> None:
        path = item.data(PATH_ROLE)
        if path:
            self.fileChosen.emit(path)

    @staticmethod
    def _list(entries: Iterable[tuple[str, str]]) -> QListWidget:
        widget = QListWidget()
        widget.setObjectName("startList")
        widget.setItemDelegate(_EntryDelegate(widget))
        widget.setResizeMode(QListView.ResizeMode.Adjust)  # re-wrap the entries when the width changes
        widget.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        widget.setSpacing(2)
        widget.setMinimumWidth(220)
        for text, data in entries:
            item = QListWidgetItem(text)
            item.setData(PATH_ROLE, data)
            item.setToolTip(text.replace("\n", ": ", 1))
            widget.addItem(item)
        return widget


def _examples(folder: Path) -> list[tuple[str, str]]:
    """(name and description, path) of each bundled example: the operators, then the sequences
    (which open in the sequence editor)."""
    entries = []
    for path in [*sorted(folder.glob("*.json")), *sorted(folder.glob("sequences/*.json"))]:
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # a broken example is the examples test's business, not the start page's
        description = str(document.get("description") or "").strip()
        entries.append((f"{document.get('name') or path.stem}\n{description}", str(path)))
    return entries


class _EntryDelegate(QStyledItemDelegate):
    """An entry's first line in bold, the rest (what it is) muted and wrapped to the list's width."""

    PAD = 6

    def _document(self, index: QModelIndex | QPersistentModelIndex, width: float) -> QTextDocument:
        title, _, rest = str(index.data() or "").partition("\n")
        document = QTextDocument()
        document.setDefaultFont(theme.ui_font(9.5))
        document.setHtml(
            f"<b>{escape(title)}</b>"
            + (f"<br><span style='color:{theme.TEXT_MUTED}'>{escape(rest)}</span>" if rest else "")
        )
        document.setTextWidth(max(width - 2 * self.PAD, 50))
        return document

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        self.initStyleOption(option, index)
        option.text = ""
        option.widget.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        document = self._document(index, option.rect.width())
        painter.save()
        painter.translate(option.rect.left() + self.PAD, option.rect.top() + self.PAD / 2)
        document.drawContents(painter, QRectF(0, 0, document.textWidth(), document.size().height()))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        view = option.widget  # the list of entries
        width = view.viewport().width() - 2 * view.spacing() if isinstance(view, QListView) else 240
        height = self._document(index, width).size().height()
        return QSize(int(width), int(height + self.PAD))
