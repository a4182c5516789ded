"""Shape inference over a whole operator graph, with per-node diagnostics.

Pure Python on tiny monomials: it re-runs after every edit (a 30-node graph
takes well under a millisecond). Errors name the node, the dimension and the
reason; nodes downstream of an error simply have no shape."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import networkx as nx

from core.errors import TesseraError

from ..ir.errors import BindingError, ShapeError
from ..ir.graph import INPUT, OUTPUT, OperatorGraph
from ..ir.primitives import Broadcast
from ..ir.symbolic import MAX_SIZE, Size, VarKind, divisor_monomials, kind_of
from ..ir.tensor import TensorType


@dataclass(frozen=True)
class Diagnostic:
    node: str
    message: str
    severity: str = "error"  # error | warning | pending
    dim: int | None = None

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Constraint:
    """A dynamic variable that must still be chosen: one of `candidates` (by shape matching)."""

    node: str
    var: str
    candidates: tuple[Size, ...]
    reason: str


@dataclass
class ShapeReport:
    shapes: dict[str, TensorType] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def solved(self) -> bool:
        """Valid and with every dynamic variable fixed."""
        return self.ok and not self.constraints

    def for_node(self, node: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.node == node]

    @property
    def output(self) -> TensorType | None:
        return self.shapes.get(OUTPUT)


def label(graph: OperatorGraph, node: str) -> str:
    """'broadcast b3' for primitives, 'input'/'output' for the ends."""
    return node if node in (INPUT, OUTPUT) else f"{graph.prim(node).op} {node}"


def infer_shapes(graph: OperatorGraph) -> ShapeReport:
    report = ShapeReport()
    kinds = graph.kinds()
    try:
        report.shapes[INPUT] = graph.input_type()
    except TesseraError as e:
        report.diagnostics.append(Diagnostic(INPUT, f"input: {e}"))
        return report
    feeding = nx.ancestors(graph.g, OUTPUT) | {OUTPUT}
    for node in graph.topological_order():
        if node == INPUT:
            continue
        srcs = graph.inputs_of(node)
        names = graph.ports(node)
        missing = [names[i] for i, s in enumerate(srcs) if s is None]
        if missing:  # an unfinished side branch is only a warning
            what = "is not connected" if node == OUTPUT else f"has no input on port {', '.join(missing)}"
            report.diagnostics.append(
                Diagnostic(node, f"{label(graph, node)} {what}", "error" if node in feeding else "warning")
            )
            continue
        if any(s not in report.shapes for s in srcs):
            continue  # an upstream node already carries the diagnostic
        inputs = [report.shapes[s] for s in srcs if s is not None]  # all are: `missing` is empty
        if node == OUTPUT:
            _check_output(graph, inputs[0], kinds, report)
            continue
        prim = graph.prim(node)
        try:
            out = prim.infer(inputs, kinds)
        except (ShapeError, TesseraError) as e:
            report.diagnostics.append(Diagnostic(node, f"{label(graph, node)}: {e}", dim=getattr(e, "dim", None)))
            continue
        bad = _dynamic_in_spatial(out, kinds)
        if bad is not None:
            report.diagnostics.append(
                Diagnostic(node, f"{label(graph, node)}: dynamic variable in spatial dim {bad} of {out}", dim=bad)
            )
            continue
        report.shapes[node] = out
        if isinstance(prim, Broadcast):
            _broadcast_constraints(graph, node, prim, inputs, kinds, report)
    for n in graph.primitive_nodes():
        if n not in feeding and not report.for_node(n):
            report.diagnostics.append(Diagnostic(n, f"{label(graph, n)} does not reach the output", "warning"))
    return report


def _dynamic_in_spatial(t: TensorType, kinds) -> int | None:
    for i in t.spatial_dims:
        if any(kind_of(v, kinds) is VarKind.DYNAMIC for v in t[i].size.variables):
            return i
    return None


def _broadcast_constraints(graph, node, prim: Broadcast, inputs, kinds, report: ShapeReport) -> None:
    m, pending = prim.pending(inputs, kinds)
    for var in pending:
        numerator = m.ratio * Size.var(var) ** (-m.ratio.exponent(var))
        report.constraints.append(
            Constraint(
                node,
                var,
                tuple(divisor_monomials(numerator)),
                f"{label(graph, node)}: {var} must divide {numerator} so that LHS {inputs[0]} divides RHS {inputs[1]}",
            )
        )


def _check_output(graph: OperatorGraph, got: TensorType, kinds, report: ShapeReport) -> None:
    report.shapes[OUTPUT] = got
    want = graph.output_template()
    shown = "[" + ", ".join(str(s) for s in want) + "]"
    if len(got) != len(want):
        report.diagnostics.append(
            Diagnostic(
                OUTPUT, f"output: got {got} ({len(got)} dims) but the template expects {shown} ({len(want)} dims)"
            )
        )
        return
    for i, (g, w) in enumerate(zip(got.sizes, want)):
        if g == w:
            continue
        dyn = [v for v in g.variables if kind_of(v, kinds) is VarKind.DYNAMIC and abs(g.exponent(v)) == 1]
        if len(dyn) == 1:
            var = dyn[0]
            value = (w / (g / Size.var(var) ** g.exponent(var))) ** g.exponent(var)
            if not value.divisor_blockers(kinds):
                report.constraints.append(
                    Constraint(OUTPUT, var, (value,), f"output dim {i}: {g} must equal {w}, so {var} = {value}")
                )
                continue
        report.diagnostics.append(
            Diagnostic(OUTPUT, f"output: dim {i} is {g} but the template expects {w} (got {got}, want {shown})", dim=i)
        )


def concrete_shapes(
    graph: OperatorGraph, report: ShapeReport, bindings: Mapping[str, int]
) -> dict[str, tuple[int, ...]]:
    """Numeric shapes for given bindings; a BindingError names the node and dimension.

    Also checks the sizes each primitive needs whole (weights, channels per group)."""
    result = {}
    for node, t in report.shapes.items():
        result[node] = tuple(_whole(graph, node, f"dim {i}", d.size, bindings) for i, d in enumerate(t))
        if math.prod(result[node]) > MAX_SIZE:
            raise BindingError(
                f"{label(graph, node)}: its tensor {list(result[node])} has {math.prod(result[node]):,} elements, "
                f"more than 2^31 - 1, the most TVM indexes (32-bit)",
                node,
            )
        for what, size in whole_sizes(graph, report, node)[len(t) :]:
            _whole(graph, node, what, size, bindings)
    return result


def whole_sizes(graph: OperatorGraph, report: ShapeReport, node: str) -> list[tuple[str, Size]]:
    """The sizes of a node with a shape that must be whole numbers once bound, named for errors:
    its shape's dimensions first, then what its primitive needs (a group count, a weight's
    dimensions)."""
    t = report.shapes[node]
    dims = [(f"dim {i}", d.size) for i, d in enumerate(t)]
    if node in (INPUT, OUTPUT):
        return dims
    inputs = [report.shapes[s] for s in graph.inputs_of(node) if s is not None]
    return dims + graph.prim(node).integral(inputs, t)


def _whole(graph: OperatorGraph, node: str, what: str, size, bindings: Mapping[str, int]) -> int:
    try:
        value = size.to_int(bindings)
    except BindingError as e:
        raise BindingError(f"{label(graph, node)} {what}: {e}", node) from None
    if value <= 0:
        raise BindingError(f"{label(graph, node)} {what}: {size} = {value} is not positive", node)
    if value > MAX_SIZE:
        raise BindingError(
            f"{label(graph, node)} {what}: {size} = {value:,} exceeds 2^31 - 1, the largest size TVM indexes (32-bit)",
            node,
        )
    return value
