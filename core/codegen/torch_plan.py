"""A graph checked and sized for torch code generation: the forward steps in
topological order, their concrete shapes, safe Python names and the weights.

Everything that can go wrong with a user's graph or bindings goes wrong here,
naming the node, before a line of code is written; the templates in
core.codegen.torch_ops then only format integers and names from this plan."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from math import prod

import networkx as nx

from ..analysis.contraction import contraction_chains
from ..analysis.shapes import ShapeReport, concrete_shapes, infer_shapes
from ..ir.errors import BindingError
from ..ir.graph import INPUT, OUTPUT, OperatorGraph
from ..ir.primitives import FullyConnected, Primitive, Share
from ..ir.symbolic import Size
from ..ir.tensor import TensorType
from .errors import CodegenError
from .sym_sizes import SymInt

INPUT_NAME = "x"  # forward's argument; node values are t_<name>, weights w_<name>
BATCH_NAME = "n"  # forward's local holding the batch size


@dataclass(frozen=True)
class Weight:
    name: str  # module attribute and state_dict key
    shape: tuple[int, ...]
    symbolic: tuple[Size, ...]
    fan_in: int  # input terms summed into each output element


@dataclass(frozen=True)
class Step:
    """One line of forward: a primitive, or a share together with the reduces it absorbs."""

    node: str
    prim: Primitive
    result: str  # Python name of the value produced
    args: tuple[str, ...]  # Python names of the inputs, per port
    ins: tuple[TensorType, ...]
    in_shapes: tuple[tuple[int, ...], ...]  # concrete, batch excluded
    out: TensorType  # for a contraction: the type after the last reduce
    out_shape: tuple[int, ...]
    absorbed: tuple[str, ...] = ()  # reduces folded into a share's einsum
    reduced: tuple[int, ...] = ()  # their axes, each against the tensor it reduces
    weight: Weight | None = None

    def own_weight(self) -> Weight:
        """The weight of a step whose primitive has one (fc, share), which the plan always gives."""
        if self.weight is None:
            raise CodegenError(f"{self.prim.op} {self.node!r} has no weight in the plan")
        return self.weight


@dataclass(frozen=True)
class Plan:
    graph: OperatorGraph
    bindings: dict[str, int]  # the variables the graph mentions, with their values
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    steps: tuple[Step, ...]
    result: str  # Python name of the value forward returns


def python_names(graph: OperatorGraph) -> dict[str, str]:
    """node id -> a unique ASCII identifier fragment, made from the id's characters.

    Ids that are already identifier-safe keep their own text; others have every other
    character replaced by _ and, on a collision, a suffix _2, _3, ... (in id order)."""
    clean = {n for n in graph.primitive_nodes() if re.fullmatch(r"[0-9A-Za-z_]+", n)}
    names = {n: n for n in clean}
    taken = set(clean)
    for node in sorted(set(graph.primitive_nodes()) - clean):
        base = re.sub(r"[^0-9A-Za-z_]", "_", node)
        name, k = base, 2
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        names[node] = name
    return names


def weight_names(graph: OperatorGraph) -> dict[str, str]:
    """node id -> parameter name (module attribute and state_dict key) of each fc and share node."""
    names = python_names(graph)
    return {n: f"w_{names[n]}" for n in graph.primitive_nodes() if isinstance(graph.prim(n), (FullyConnected, Share))}


def make_plan(graph: OperatorGraph, bindings: Mapping[str, int] | None = None, symbolic: bool = False) -> Plan:
    """Check the graph and size it with the graph's bindings overridden by `bindings`; with
    `symbolic`, its sizes are SymInts, which print as expressions over the variables
    (core.codegen.sym_sizes, for shape-generic code)."""
    values = _checked_bindings({**graph.bindings, **(bindings or {})})
    report = infer_shapes(graph)
    if report.errors:
        raise CodegenError(
            "cannot generate code for an invalid operator: " + "; ".join(d.message for d in report.errors)
        )
    _check_solved(report, values)
    shapes = concrete_shapes(graph, report, values)
    if symbolic:
        shapes = {
            n: tuple(SymInt.of(v, d.size) for v, d in zip(shape, report.shapes[n])) for n, shape in shapes.items()
        }
    names, weights = python_names(graph), weight_names(graph)
    value_of = {INPUT: INPUT_NAME, **{n: f"t_{names[n]}" for n in names}}
    chains = contraction_chains(graph)
    absorbed = {r for chain in chains.values() for r in chain}
    live = nx.ancestors(graph.g, OUTPUT)
    steps = []
    for node in graph.topological_order():
        if node in (INPUT, OUTPUT) or node not in live or node in absorbed:
            continue
        chain = chains.get(node, [])
        last = chain[-1] if chain else node
        srcs = graph.sources(node)
        step = Step(
            node,
            graph.prim(node),
            value_of[last],
            tuple(value_of[s] for s in srcs),
            tuple(report.shapes[s] for s in srcs),
            tuple(shapes[s] for s in srcs),
            report.shapes[last],
            shapes[last],
            absorbed=tuple(chain),
            reduced=tuple(graph.prim(r).axis(report.shapes[graph.sources(r)[0]]) for r in chain),
        )
        weight = _weight(graph, step, weights.get(node), report.shapes[node], shapes, values, symbolic)
        steps.append(step if weight is None else replace(step, weight=weight))
    mentioned = graph.mentioned_variables()
    return Plan(
        graph,
        {k: v for k, v in sorted(values.items()) if k in mentioned},
        shapes[INPUT],
        shapes[OUTPUT],
        tuple(steps),
        value_of[graph.sources(OUTPUT)[0]],
    )


def _checked_bindings(values: dict) -> dict[str, int]:
    for name, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise BindingError(f"binding {name}={v!r}: sizes must be positive integers")
    return values


def _check_solved(report: ShapeReport, values: Mapping[str, int]) -> None:
    """A pending dynamic variable is solved when it is bound to one of its candidates."""
    for c in report.constraints:
        allowed = set()
        for cand in c.candidates:
            with contextlib.suppress(BindingError):
                allowed.add(cand.evaluate(values))
        if values.get(c.var) not in allowed:
            shown = ", ".join(map(str, c.candidates))
            got = f"it is bound to {values[c.var]}" if c.var in values else "it is unbound"
            raise CodegenError(f"{c.reason}; {got} (solve it or bind {c.var} to one of: {shown})")


def _weight(graph, step: Step, name: str | None, own_type: TensorType, shapes, values, symbolic) -> Weight | None:
    """The step's weight; its fan-in is what kaiming initialisation divides by."""
    sizes = step.prim.weight_shape(list(step.ins), own_type) if name is not None else None
    if name is None or sizes is None:
        return None
    shape = tuple(SymInt.of(s.to_int(values), s) if symbolic else s.to_int(values) for s in sizes)  # whole: checked
    if isinstance(step.prim, Share):
        fan_in = prod(shapes[graph.sources(r)[0]][d] for r, d in zip(step.absorbed, step.reduced))
    else:
        fan_in = shape[1]
    return Weight(name, shape, tuple(sizes), fan_in)
