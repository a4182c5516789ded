"""The editing document: one operator graph, its undo history, its file and its
live summary. Views read from it and edit through `document.editor`; it adds
only the Qt signals that tell them when to redraw."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from core.analysis.summary import Summary, summarize
from core.ir.editing import Editor
from core.ir.graph import INPUT, OUTPUT, OperatorGraph
from core.ir.layout import layered_layout
from core.ir.primitives import make
from core.ir.serialize import load_operator, save_operator
from resources import EXAMPLES

NEW_BINDINGS = {"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3}
#: what File > New and the start page offer: key -> (name, what it is)
TEMPLATES = {
    "pointwise": ("Pointwise convolution", "a 1x1 convolution (one fc over the channels) to build on"),
    "conv2d": ("KxK convolution", "unfold, share and reduce: Syno's form of a standard convolution"),
    "empty": ("Empty operator", "only the input and the output, to draw from scratch"),
}


def new_graph(template: str = "pointwise") -> OperatorGraph:
    """A new operator [C_in, H, W] -> [C_out, H, W] from one of TEMPLATES; all but 'empty' validate."""
    if template == "conv2d":
        graph = load_operator(EXAMPLES / "conv2d.json")
        graph.set_declaration(name="untitled", description="")
        return graph
    graph = OperatorGraph(["C_in", "H", "W"], ["C_out", "H", "W"], name="untitled")
    graph.bindings = dict(NEW_BINDINGS)
    if template == "pointwise":
        graph.insert_node("pointwise", make("fc", {"out": "C_out"}), (0.0, 0.0))
        graph.insert_edge(INPUT, "pointwise", 0)
        graph.insert_edge("pointwise", OUTPUT, 0)
        for node, pos in layered_layout(graph).items():
            graph.set_pos(node, pos)
    return graph


class OperatorDocument(QObject):
    summaryChanged = Signal()  # after every edit, undo, redo or change of bindings
    historyChanged = Signal()  # undo/redo availability or the modified flag changed

    def __init__(self, graph: OperatorGraph | None = None, path: str | Path | None = None, parent=None):
        super().__init__(parent)
        self.graph = graph if graph is not None else new_graph()
        self.path = Path(path) if path else None
        self.editor = Editor(self.graph, on_change=self._history_changed)
        self.summary: Summary = summarize(self.graph)

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
        """The file's name, else the operator's (a result opened from the explorer), else Untitled."""
        if self.path:
            return self.path.name
        return self.graph.name if self.graph.name and self.graph.name != "untitled" else "Untitled"

    @property
    def bindings(self) -> dict[str, int]:
        return dict(self.graph.bindings)

    def set_bindings(self, bindings: dict[str, int]) -> None:
        """The sizes are part of the document: saved with it, one undo step, marking it modified."""
        if dict(bindings) != self.graph.bindings:
            self.editor.declare(bindings=dict(bindings))

    def _history_changed(self) -> None:
        self._resummarize()
        self.historyChanged.emit()

    def _resummarize(self) -> None:
        self.summary = summarize(self.graph)
        self.summaryChanged.emit()
