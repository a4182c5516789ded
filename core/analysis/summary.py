"""One call that the CLI, the GUI and the job layer share: shapes, constraints,
diagnostics and costs of an operator, symbolic and (with bindings) numeric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..ir.bindings import check_names
from ..ir.errors import BindingError
from ..ir.graph import INPUT, OUTPUT, OperatorGraph
from .cost import CostReport, operator_cost
from .shapes import ShapeReport, concrete_shapes, infer_shapes


@dataclass
class Summary:
    graph: OperatorGraph
    shapes: ShapeReport
    cost: CostReport
    bindings: dict[str, int]
    numeric_shapes: dict[str, tuple[int, ...]] | None
    numeric_cost: dict | None
    binding_error: str | None
    unbound: tuple[str, ...] = ()  # variables with no value (dynamic ones still to choose excepted)
    binding_node: str | None = None  # the node whose size the bindings make invalid (576/7), if one is

    @property
    def error_count(self) -> int:
        """The errors the window counts: shape errors, and the bindings' error if any."""
        return len(self.shapes.errors) + bool(self.binding_error)

    @property
    def ok(self) -> bool:
        """Valid, and with bindings also sized: every variable bound, no dynamic one left to choose."""
        return self.shapes.ok and self.binding_error is None and not (self.bindings and self.shapes.constraints)

    def messages(self) -> list[str]:
        lines = [f"{d.severity}: {d.message}" for d in self.shapes.diagnostics]
        lines += [
            f"pending: {c.reason} (candidates: {', '.join(map(str, c.candidates))})" for c in self.shapes.constraints
        ]
        if self.binding_error:
            lines.append(f"error: {self.binding_error}")
        return lines

    def to_json(self) -> dict:
        g, num = self.graph, self.numeric_shapes or {}
        nodes = []
        for n in g.topological_order():
            entry: dict[str, object] = {
                "id": n,
                "op": n if n in (INPUT, OUTPUT) else g.prim(n).op,
                "shape": str(self.shapes.shapes[n]) if n in self.shapes.shapes else None,
            }
            if n in num:
                entry["shape_numeric"] = list(num[n])
            if n in self.cost.nodes:
                c = self.cost.nodes[n]
                entry.update(macs=str(c.macs), flops=str(c.flops), params=str(c.params))
                if self.numeric_cost:
                    entry.update({f"{k}_value": v for k, v in self.numeric_cost["nodes"][n].items()})
            entry["diagnostics"] = [d.message for d in self.shapes.for_node(n)]
            nodes.append(entry)
        total = {f: str(self.cost.total(f)) for f in ("macs", "flops", "params")}
        if self.numeric_cost:
            total.update({f"{f}_value": self.numeric_cost[f] for f in ("macs", "flops", "params")})
        out = self.shapes.output
        return {
            "name": g.name,
            "valid": self.ok,
            "input_shape": str(g.input_type()),
            "output_shape": str(out) if out is not None else None,
            "output_shape_numeric": list(num["output"]) if "output" in num else None,
            "bindings": self.bindings,
            "nodes": nodes,
            "total": total,
            "messages": self.messages(),
        }


def summarize(graph: OperatorGraph, bindings: Mapping[str, int] | None = None) -> Summary:
    """Bindings default to the graph's own; numbers are computed when every variable is bound."""
    bindings = {**graph.bindings, **(bindings or {})}
    shapes = infer_shapes(graph)
    cost = operator_cost(graph, shapes)
    numeric_shapes = numeric_cost = binding_error = binding_node = None
    pending = {c.var for c in shapes.constraints}  # a choice to make, reported as such, not a size to bind
    missing = sorted(graph.mentioned_variables() - set(bindings) - pending)
    if missing and bindings:
        binding_error = f"no value for {', '.join(missing)}"
    elif not missing and not pending:  # numbers for every node that has a shape, even while the graph is unfinished
        try:
            numeric_shapes = concrete_shapes(graph, shapes, bindings)
            numeric_cost = cost.numeric(bindings, numeric_shapes)
        except BindingError as e:
            binding_error, binding_node = str(e), e.node
    return Summary(
        graph, shapes, cost, bindings, numeric_shapes, numeric_cost, binding_error, tuple(missing), binding_node
    )


def why_not_measurable(graph: OperatorGraph, bindings: dict[str, int], names: bool = True) -> str | None:
    """Why `graph` cannot be built and timed at `bindings`, or None: a shape rule fails, or a
    size has no value; with `names`, a binding of a variable the operator does not have (a
    typo, most likely). The one rule the window's dialogs and the command line check."""
    if names:
        try:
            check_names(bindings, graph.kinds(), graph.name or "the operator")
        except BindingError as e:
            return str(e)
    summary = summarize(graph, bindings)
    if not summary.ok:
        return "; ".join(summary.messages())
    if summary.numeric_cost is None:
        missing = sorted(graph.mentioned_variables() - set(summary.bindings))
        return f"no value for {', '.join(missing)}"
    return None
