"""Shape inference after one edit on a 30-node graph (target: well under 10 ms), and reading
and validating a 10,000-node operator file (target: well under a second)."""

from __future__ import annotations

import statistics
import time

from core.analysis.shapes import infer_shapes
from core.analysis.summary import summarize
from core.ir.editing import Editor
from core.ir.graph import OperatorGraph
from core.ir.serialize import graph_from_document
from tests.support import relu_chain_document


def thirty_node_graph() -> tuple[Editor, str]:
    """Ten blocks of unfold -> grouped fc -> residual broadcast: 30 primitives."""
    g = OperatorGraph(["C", "H", "W"], ["C", "H", "W"])
    g.bindings = {"C": 64, "H": 56, "W": 56, "K": 3, "G": 4}
    ed = Editor(g)
    prev = "input"
    for _i in range(10):
        u = ed.add_node("unfold", {"dim": -1, "K": "K"})
        f = ed.add_node("fc", {"out": "C", "groups": "G"})
        b = ed.add_node("broadcast", {"fn": "add"})
        ed.connect(prev, u)
        ed.connect(u, f)
        ed.connect(prev, b, 0)
        ed.connect(f, b, 1)
        prev = b
    ed.connect(prev, "output")
    assert len(g.primitive_nodes()) == 30
    return ed, u


def timed(fn, repeat=300) -> float:
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1e3


def main() -> None:
    ed, node = thirty_node_graph()
    assert infer_shapes(ed.graph).solved

    def edit_and_infer():
        ed.set_params(node, K="5")
        infer_shapes(ed.graph)
        ed.undo()

    shapes_ms = timed(lambda: infer_shapes(ed.graph))
    edit_ms = timed(edit_and_infer)
    summary_ms = timed(lambda: summarize(ed.graph))
    print(f"shape inference, 30 nodes:               {shapes_ms:.3f} ms (target < 10 ms, ratio {shapes_ms / 10:.3f})")
    print(f"one edit + inference + undo, 30 nodes:   {edit_ms:.3f} ms")
    print(f"full summary (shapes+cost+numbers):      {summary_ms:.3f} ms")
    doc = relu_chain_document(10_000)
    start = time.perf_counter()
    graph = graph_from_document(doc)
    read = time.perf_counter() - start
    assert summarize(graph, graph.bindings).ok
    total = time.perf_counter() - start
    print(f"10,000-node chain: read {read:.2f} s, read + validate {total:.2f} s (target < 1 s, ratio {total:.2f})")


if __name__ == "__main__":
    main()
