"""The editing document: one operator graph, its undo history, its file and its
live summary. Views read from it and edit through `document.editor`; it adds
only the Qt signals that tell them when to redraw."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from core.analysis.summary import Summary, summarize
from core.ir.editing import Editor
from core.ir.graph import OperatorGraph
from core.ir.serialize import load_operator, save_operator

NEW_BINDINGS = {"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3}


def new_graph() -> OperatorGraph:
    """The template a new operator starts from: [C_in, H, W] -> [C_out, H, W]."""
    graph = OperatorGraph(["C_in", "H", "W"], ["C_out", "H", "W"], name="untitled")
    graph.bindings = dict(NEW_BINDINGS)
    return graph


class OperatorDocument(QObject):
    summaryChanged = Signal()  # after every edit, undo, redo or change of bindings
    historyChanged = Signal()  # undo/redo availability or the modified flag changed

    def __init__(self, graph: OperatorGraph | None = None, path: str | Path | None = None, parent=None):
        super().__init__(parent)
        self.graph = graph if graph is not None else new_graph()
        self.path = Path(path) if path else None
        self.editor = Editor(self.graph, on_change=self._history_changed)
        self._bindings: dict[str, int] = dict(self.graph.bindings)
        self.summary: Summary = summarize(self.graph, self._bindings)

    @classmethod
    def open(cls, path: str | Path, parent=None) -> OperatorDocument:
        """Raises FormatError (a TesseraError) with the file and element at fault."""
        return cls(load_operator(path), path, parent)

    def save(self, path: str | Path | None = None) -> None:
        target = Path(path) if path else self.path
        if target is None:
            raise ValueError("save() needs a path for a document that was never saved")
        save_operator(self.graph, target)
        self.path = target
        self.editor.undo_stack.set_clean()

    @property
    def modified(self) -> bool:
        return self.editor.modified

    @property
    def display_name(self) -> str:
        return self.path.name if self.path else "Untitled"

    @property
    def bindings(self) -> dict[str, int]:
        return dict(self._bindings)

    def set_bindings(self, bindings: dict[str, int]) -> None:
        """Bindings used for numbers on screen; the file's own bindings stay as they are."""
        self._bindings = dict(bindings)
        self._resummarize()

    def _history_changed(self) -> None:
        self._resummarize()
        self.historyChanged.emit()

    def _resummarize(self) -> None:
        self.summary = summarize(self.graph, self._bindings)
        self.summaryChanged.emit()
