"""The editing document: one operator graph, its undo history, its file and its
live summary. Views read from it and edit through `document.editor`; it adds
only the Qt signals that tell them when to redraw."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from core.analysis.summary import Summary, summarize
from core.ir.editing import Editor
from core.ir.graph import INPUT, OUTPUT, OperatorGraph
from core.ir.layout import lay_out_if_stacked, layered_layout
from core.ir.primitives import make
from core.ir.serialize import load_operator, save_operator
from resources import EXAMPLES

UNTITLED = "untitled"  # the name of an operator nobody named yet (saving names it after its file)
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
        graph.set_declaration(name=UNTITLED, description="")
        return graph
    graph = OperatorGraph(["C_in", "H", "W"], ["C_out", "H", "W"], name=UNTITLED)
    graph.bindings = dict(NEW_BINDINGS)
    if template == "pointwise":
        graph.insert_node("pointwise", make("fc", {"out": "C_out"}), (0.0, 0.0))
        graph.insert_edge(INPUT, "pointwise", 0)
        graph.insert_edge("pointwise", OUTPUT, 0)
        for node, pos in layered_layout(graph).items():
            graph.set_pos(node, pos)
    return graph


def read_operator_file(path: str | Path) -> tuple[OperatorGraph, Path, Summary]:
    """What opening a file computes, Qt-free (a thread may run it): its graph, laid out if
    the file has no positions (core.ir.layout.lay_out_if_stacked), and its summary."""
    graph = load_operator(path)
    lay_out_if_stacked(graph)
    return graph, Path(path), summarize(graph)


class OperatorDocument(QObject):
    summaryChanged = Signal()  # after every edit, undo, redo or change of bindings
    historyChanged = Signal()  # undo/redo availability or the modified flag changed

    def __init__(
        self,
        graph: OperatorGraph | None = None,
        path: str | Path | None = None,
        parent=None,
        summary: Summary | None = None,
    ):
        """`summary`: the graph's, when the caller made it already (views.editor.opening)."""
        super().__init__(parent)
        self.graph = graph if graph is not None else new_graph()
        self.path = Path(path) if path else None
        self.editor = Editor(self.graph, on_change=self._history_changed)
        self.summary: Summary = summary if summary is not None else summarize(self.graph)

    @classmethod
    def open(cls, path: str | Path, parent=None) -> OperatorDocument:
        """Raises FormatError (a TesseraError) with the file and element at fault. A file
        without positions is laid out (core.ir.layout.lay_out_if_stacked)."""
        graph, path, summary = read_operator_file(path)
        return cls(graph, path, parent, summary)

    def save(self, path: str | Path | None = None) -> None:
        """Write the file; an operator nobody named takes the file's name (my_conv.json: my_conv)."""
        target = Path(path) if path else self.path
        if target is None:
            raise ValueError("save() needs a path for a document that was never saved")
        if not self.named:
            self.graph.set_declaration(name=target.stem)
        save_operator(self.graph, target)
        self.path = target
        self.editor.undo_stack.set_clean()

    @property
    def modified(self) -> bool:
        return self.editor.modified

    @property
    def named(self) -> bool:
        return bool(self.graph.name) and self.graph.name != UNTITLED

    @property
    def operator_name(self) -> str:
        """The name jobs, results and the gallery show: the operator's, else its file's, else untitled."""
        if self.named:
            return self.graph.name
        return self.path.stem if self.path else UNTITLED

    def rename(self, name: str) -> None:
        """Name the operator (one undo step); a blank name is refused with a ValueError."""
        name = name.strip()
        if not name:
            raise ValueError("an operator needs a name, e.g. my_conv")
        if name != self.graph.name:
            self.editor.declare(name=name)

    @property
    def display_name(self) -> str:
        """The file's name, else the operator's (a result opened from the explorer), else Untitled."""
        if self.path:
            return self.path.name
        return self.graph.name if self.named else UNTITLED.capitalize()

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
