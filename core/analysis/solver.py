"""Dynamic-variable solving by shape matching (Canvas).

Shape inference leaves a Constraint wherever a dynamic variable (x1, x2, ...)
must still be chosen: a broadcast whose LHS must divide RHS, or an output that
must equal the template. The valid values are the monomials dividing the
matched numerator (e.g. LHS [x1, K_H, H, W] against RHS [G, x2/G, K_H, K_W, H, W]
gives x1 in {1, K_W, x2, K_W*x2}). `solutions` explores them depth-first,
re-running shape inference after each choice, and keeps complete valid ones."""

from __future__ import annotations

from collections.abc import Mapping

from ..ir.graph import OperatorGraph
from ..ir.primitives import make
from ..ir.primitives.blending import match
from ..ir.symbolic import Size, divisor_monomials, parse_size
from ..ir.tensor import TensorType
from .shapes import infer_shapes


def match_candidates(lhs: TensorType, rhs: TensorType, var: str) -> list[Size]:
    """Values of `var` (a dynamic variable of LHS) for which LHS's middle divides RHS's."""
    ratio = match(lhs, rhs).ratio
    numerator = ratio * Size.var(var) ** (-ratio.exponent(var))
    return divisor_monomials(numerator)


def substitute(graph: OperatorGraph, values: Mapping[str, Size]) -> OperatorGraph:
    """A copy of the graph with variables replaced in every size expression."""

    def rewrite(expr: str) -> str:
        return str(parse_size(expr).subs(values))

    copy = OperatorGraph(
        [rewrite(s) for s in graph.input_shape],
        [rewrite(s) for s in graph.output_shape],
        spatial=graph.spatial,
        variables={k: v.value for k, v in graph.variables.items() if k not in values},
        name=graph.name,
        description=graph.description,
        notes=graph.notes,
    )
    copy.bindings = {k: v for k, v in graph.bindings.items() if k not in values}
    for n in graph.primitive_nodes():
        prim = graph.prim(n)
        params = {
            p.name: rewrite(str(prim.params[p.name]))
            if p.kind == "size" and prim.params[p.name] not in (None, "")
            else prim.params[p.name]
            for p in prim.spec
        }
        copy.insert_node(n, make(prim.op, params), graph.pos(n))
    for u, v, port in graph.edges():
        copy.insert_edge(u, v, port)
    return copy


def solutions(graph: OperatorGraph, limit: int = 64) -> list[dict[str, Size]]:
    """Complete assignments of the graph's pending dynamic variables that make it valid."""
    found: list[dict[str, Size]] = []

    def explore(assignment: dict[str, Size]) -> None:
        if len(found) >= limit:
            return
        report = infer_shapes(substitute(graph, assignment) if assignment else graph)
        if not report.ok:
            return
        if not report.constraints:
            found.append(assignment)
            return
        c = report.constraints[0]
        for value in c.candidates:
            explore({**{k: v.subs({c.var: value}) for k, v in assignment.items()}, c.var: value})

    explore({})
    return found
