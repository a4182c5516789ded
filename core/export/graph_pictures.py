"""The operator graph as Graphviz DOT text, for people who lay out and style graphs with
Graphviz. Pictures (PNG, SVG) are drawn by Qt from the editor's own canvas instead
(views.pictures), so they need no Graphviz install and look like the editor.

Every label and id is quoted and escaped, so node ids and names from files cannot
change the DOT structure."""

from __future__ import annotations

from core.analysis.summary import summarize
from core.ir.graph import INPUT, OUTPUT

from .exportable import Exportable

# line style per primitive family: views move data, arithmetic computes, contractions dominate the cost
_STYLE = {
    "view": "rounded,dashed",
    "rearrangement": "rounded,dashed",
    "arithmetic": "rounded",
    "blending": "rounded",
    "contraction": "rounded,bold",
}


def graph_dot(item: Exportable) -> str:
    """digraph with one box per node (op, parameters, shape) and one edge per wire (shape it
    carries, port name for two-input primitives), left to right as in the editor."""
    graph = item.graph
    summary = summarize(graph)
    numeric = summary.numeric_shapes or {}

    def shape(node: str) -> str:
        symbolic = summary.shapes.shapes.get(node)
        if symbolic is None:
            return "?"
        sizes = numeric.get(node)
        return f"{symbolic}" + (f" = {'x'.join(map(str, sizes))}" if sizes else "")

    lines = [
        f"digraph {_quote(item.name)} {{",
        "  rankdir=LR;",
        '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9];',
        f"  input [shape=oval, label={_quote(f'input {graph.input_type()}')}];",
        f"  output [shape=oval, label={_quote('output [' + ', '.join(graph.output_shape) + ']')}];",
    ]
    for node in graph.topological_order():
        if node in (INPUT, OUTPUT):
            continue
        prim = graph.prim(node)
        params = ", ".join(f"{p.name}={prim.params[p.name]}" for p in prim.spec)
        label = f"{node}\n{prim.op}({params})\n{shape(node)}"
        lines.append(f"  {_quote(node)} [label={_quote(label)}, style={_quote(_STYLE.get(prim.category, 'rounded'))}];")
    for src, dst, port in sorted(graph.edges()):
        ports = graph.ports(dst)
        label = shape(src) + (f" ({ports[port]})" if len(ports) > 1 else "")
        lines.append(f"  {_quote(src)} -> {_quote(dst)} [label={_quote(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    """A DOT double-quoted string; newlines become DOT's centred line breaks."""
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{escaped}"'
