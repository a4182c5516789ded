"""The operator a transformed nest computes, as operator graphs of the IR.

Each part becomes one graph built with the Editor from the primitives (docs/operators.md), so
shapes, FLOPs, parameters, the torch module (core.codegen.to_torch) and the
backbone replacement are the IR's own:

    stride(ci, B)                 bottleneck(ci, B): every B-th input channel
    group(H, G), group(W, G)      spatial grouping: strips, windows clipped at their edges
    unfold(H, K/B), unfold(W, K/B)  the (possibly shrunk, centred) window
    stride(H, B), stride(W, B)    spatial bottleneck: every B-th output position
    fc(out = C_out/B, groups = G) the contraction (grouped: diagonal blocks)
    expand + merge                output bottleneck: each computed value repeated B times
    merge                         strips back into H and W

Sizes stay symbolic (C_in, C_out, H, W, K and the steps' factor expressions) so
the graph fits every layer of a backbone; a part of a peeled nest has a fixed
channel count. A peeled nest's parts become one graph, each part's chain from the
input joined by concat along channels, with its fixed total channel count."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..analysis.legality import SequenceReport, check_sequence
from ..analysis.summary import Summary, summarize
from ..ir.editing import Editor
from ..ir.graph import OUTPUT, OperatorGraph
from ..ir.layout import layered_layout
from ..ir.loopnest import Computation, Program
from ..ir.sequence import Sequence
from ..ir.symbolic import Size
from .errors import CodegenError

_SPATIAL = ("GH", "H", "GW", "W")  # axis names that are spatial (strips and positions)
_VARIABLES = {"C_in": "primary", "C_out": "primary", "H": "primary", "W": "primary", "K": "coefficient"}


@dataclass
class SequenceOperator:
    """The result of a sequence: the operator graph, and one graph per part (the whole
    graph's branches) for per-part figures."""

    graph: OperatorGraph
    graphs: list[OperatorGraph]
    channels: list[int]  # output channels of each part
    bindings: dict[str, int]

    def summaries(self, bindings: Mapping[str, int] | None = None) -> list[Summary]:
        return [summarize(g, {**self.bindings, **(bindings or {})}) for g in self.graphs]

    def totals(self, bindings: Mapping[str, int] | None = None) -> dict[str, int]:
        """Numeric MACs, FLOPs and parameters summed over the parts."""
        sums = {"macs": 0, "flops": 0, "params": 0}
        for s in self.summaries(bindings):
            if s.numeric_cost is None:
                raise CodegenError(f"{s.graph.name}: no costs at these sizes: {'; '.join(s.messages())}")
            for k in sums:
                sums[k] += s.numeric_cost[k]
        return sums


def checked_sequence(seq: Sequence, bindings: Mapping[str, int] | None = None) -> SequenceReport:
    """check_sequence, and whether the final program's operator can be built at its sizes
    (shape rules, whole and 32-bit sizes): what `sequence check` accepts, apply builds."""
    report = check_sequence(seq, bindings)
    if report.final is not None:
        broken = [
            m
            for s in result_operator(report.final, seq.name or "sequence").summaries()
            if not s.ok
            for m in s.messages()
        ]
        report.operator_problem = "; ".join(broken)
    return report


def result_operator(program: Program, name: str = "sequence") -> SequenceOperator:
    bindings = dict(program.bindings)
    if len(program.parts) == 1:
        graphs = [_graph([program.parts[0].comp], name, symbolic_out=True)]
        whole = graphs[0]
    else:
        graphs = [_graph([nest.comp], f"{name}_part{k}") for k, nest in enumerate(program.parts)]
        whole = _graph([nest.comp for nest in program.parts], name)
    for g in [whole, *graphs]:
        g.bindings = {k: v for k, v in bindings.items() if k in g.mentioned_variables()}
    return SequenceOperator(whole, graphs, [n.comp.out_count for n in program.parts], bindings)


def _graph(parts: list[Computation], name: str, symbolic_out: bool = False) -> OperatorGraph:
    """The parts as one operator graph [C_in, (H, W)] -> [channels, (H, W)]: a chain of
    primitives from the input per part, the chains' outputs joined by concat in order.
    With `symbolic_out` (one part, not peeled) its output channels stay C_out."""
    c = parts[0]
    out = "C_out" if symbolic_out else str(sum(p.out_count for p in parts))
    spatial = ["H", "W"] if c.spatial else []
    used = ["C_in", *(["C_out"] if symbolic_out else []), *spatial, *(["K"] if c.spatial else [])]
    graph = OperatorGraph(
        ["C_in", *spatial],
        [out, *spatial],
        spatial=len(spatial),
        variables={k: _VARIABLES[k] for k in used},
        name=name,
        description=f"{c.kind} after a transformation sequence",
    )
    editor = Editor(graph)
    joined = None
    for part in parts:
        chain = _Chain(editor)
        _lower(chain, part, Size.var("C_out") if symbolic_out else Size(part.out_count))
        if joined is None:
            joined = chain.last
        else:
            concat = editor.add_node("concat", {"dim": 0})
            editor.connect(joined, concat, 0)
            editor.connect(chain.last, concat, 1)
            joined = concat
    assert joined is not None  # parts[0] above: there is at least one part
    editor.connect(joined, OUTPUT)
    editor.move(layered_layout(graph))
    return graph


class _Chain:
    """Appends primitives in a chain from the input, tracking the tensor's axes by name."""

    def __init__(self, editor: Editor):
        self.editor, self.last = editor, "input"

    def add(self, op: str, **params) -> None:
        node = self.editor.add_node(op, params)
        self.editor.connect(self.last, node)
        self.last = node


def _lower(b: _Chain, c: Computation, out_channels: Size) -> None:
    axes = ["C"] + (["H", "W"] if c.spatial else [])  # names of the current tensor's axes

    def at(axis: str) -> int:
        return axes.index(axis)

    if c.factor("ci").value > 1:
        b.add("stride", dim=0, S=str(c.factor("ci")))
    if c.spatial:
        for axis, it in (("H", "oh"), ("W", "ow")):
            if c.group(it).value > 1:
                b.add("group", dim=at(axis), G=str(c.group(it)))
                axes[at(axis) : at(axis) + 1] = [f"G{axis}", axis]
        for axis, it in (("H", "kh"), ("W", "kw")):
            b.add("unfold", dim=at(axis), K=str(Size.var("K") / c.factor(it).expr))
            axes.insert(min(at(a) for a in _SPATIAL if a in axes), f"K{axis}")
        for axis, it in (("H", "oh"), ("W", "ow")):
            if c.factor(it).value > 1:
                b.add("stride", dim=at(axis), S=str(c.factor(it)))
    b.add("fc", out=str(out_channels / c.factor("co").expr), groups=str(c.group("co")))
    axes = ["C"] + [a for a in axes if a in _SPATIAL]
    for axis, it in (("W", "ow"), ("H", "oh"), ("C", "co")):
        if axis in axes and c.factor(it).value > 1:  # repeat each computed value B times
            b.add("expand", dim=at(axis) + 1, size=str(c.factor(it)))
            b.add("merge", dim=at(axis))
    for axis in ("GW", "GH"):
        if axis in axes:
            b.add("merge", dim=at(axis))
            axes.remove(axis)
