"""The operator graph: one input tensor, primitive nodes, one output.

A small class around a networkx DiGraph. Node "input" carries the declared
input shape, node "output" the template's expected output shape. Edges carry
the input port they feed. Mutators are low-level and emit events; user edits go
through core.ir.editing so they can be undone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .errors import ConnectionRefused, ParamError
from .primitives import Primitive
from .symbolic import Size, VarKind, default_kind, parse_size
from .tensor import Dim, TensorType

INPUT, OUTPUT = "input", "output"


@dataclass(frozen=True)
class GraphEvent:
    """kind: node_added, node_removed, edge_added, edge_removed, params_changed, moved, reset."""

    kind: str
    node: str | None = None
    edge: tuple[str, str, int] | None = None
    data: dict = field(default_factory=dict)


class OperatorGraph:
    def __init__(
        self,
        input_shape: list[str],
        output_shape: list[str],
        *,
        spatial: int = 2,
        variables: Mapping[str, str] | None = None,
        name: str = "",
        description: str = "",
        notes: list[str] | None = None,
    ):
        self.name, self.description = name, description
        self.notes = list(notes or [])  # provenance: what is known, what was inferred (one paragraph each)
        self.input_shape = [str(s) for s in input_shape]
        self.output_shape = [str(s) for s in output_shape]
        self.spatial = spatial
        self.variables: dict[str, VarKind] = {k: VarKind(v) for k, v in (variables or {}).items()}
        self.bindings: dict[str, int] = {}
        self.g = nx.DiGraph()
        self.g.add_node(INPUT, prim=None, pos=(0.0, 0.0))
        self.g.add_node(OUTPUT, prim=None, pos=(600.0, 0.0))
        self._listeners: list[Callable[[GraphEvent], None]] = []
        self._order: list[str] | None = None

    # events ---------------------------------------------------------------
    def subscribe(self, fn: Callable[[GraphEvent], None]) -> None:
        self._listeners.append(fn)

    def unsubscribe(self, fn: Callable[[GraphEvent], None]) -> None:
        self._listeners.remove(fn)

    def _emit(self, event: GraphEvent) -> None:
        for fn in list(self._listeners):
            fn(event)

    # declared tensors -------------------------------------------------------
    def kinds(self) -> dict[str, VarKind]:
        """Kinds of every variable the graph mentions (declared, else by naming convention)."""
        kinds = {v: default_kind(v) for v in self.mentioned_variables()}
        kinds.update(self.variables)
        return kinds

    def input_type(self) -> TensorType:
        n = len(self.input_shape)
        return TensorType(Dim(parse_size(s), i >= n - self.spatial) for i, s in enumerate(self.input_shape))

    def output_template(self) -> list[Size]:
        return [parse_size(s) for s in self.output_shape]

    def mentioned_variables(self) -> set[str]:
        names: set[str] = set()
        exprs = [*self.input_shape, *self.output_shape]
        for n in self.primitive_nodes():
            prim = self.prim(n)
            exprs += [
                str(prim.params[p.name])
                for p in prim.spec
                if p.kind == "size" and prim.params[p.name] not in (None, "")
            ]
        for e in exprs:
            names |= parse_size(e).variables
        return names

    # queries ----------------------------------------------------------------
    def prim(self, node: str) -> Primitive:
        return self.g.nodes[node]["prim"]

    def pos(self, node: str) -> tuple[float, float]:
        return self.g.nodes[node]["pos"]

    def primitive_nodes(self) -> list[str]:
        return [n for n in self.g.nodes if n not in (INPUT, OUTPUT)]

    def ports(self, node: str) -> tuple[str, ...]:
        if node == INPUT:
            return ()
        if node == OUTPUT:
            return ("y",)
        return self.prim(node).ports

    def inputs_of(self, node: str) -> list[str | None]:
        """Source node per input port (None where unconnected)."""
        srcs: list[str | None] = [None] * len(self.ports(node))
        for src, _, data in self.g.in_edges(node, data=True):
            srcs[data["port"]] = src
        return srcs

    def sources(self, node: str) -> list[str]:
        """Source node per input port of a node whose ports are all connected, as in a graph
        that checks without errors (what code generation reads)."""
        srcs = [s for s in self.inputs_of(node) if s is not None]
        if len(srcs) != len(self.ports(node)):
            raise ConnectionRefused(f"node {node!r} has an input that is not connected")
        return srcs

    def edges(self) -> list[tuple[str, str, int]]:
        return [(u, v, d["port"]) for u, v, d in self.g.edges(data=True)]

    def topological_order(self) -> list[str]:
        """Deterministic (lexicographic) order, cached until the structure changes."""
        if self._order is None:
            self._order = list(nx.lexicographical_topological_sort(self.g))
        return list(self._order)

    def new_id(self, op: str) -> str:
        k = 1
        while f"{op}{k}" in self.g:
            k += 1
        return f"{op}{k}"

    def next_dynamic_variable(self) -> str:
        used = self.mentioned_variables()
        k = 1
        while f"x{k}" in used:
            k += 1
        return f"x{k}"

    # connection rules ---------------------------------------------------------
    def check_connect(self, src: str, dst: str, port: int) -> None:
        """Raise ConnectionRefused for an edge that can never be legal."""
        for n in (src, dst):
            if n not in self.g:
                raise ConnectionRefused(f"no node named {n!r}")
        if src == OUTPUT:
            raise ConnectionRefused("the output node has no outgoing port")
        if dst == INPUT:
            raise ConnectionRefused("the input node takes no inputs")
        if src == dst:
            raise ConnectionRefused(f"{src} cannot feed itself")
        ports = self.ports(dst)
        if not 0 <= port < len(ports):
            raise ConnectionRefused(f"{dst} has no input port {port} (ports: {', '.join(ports)})")
        occupant = self.inputs_of(dst)[port]
        if occupant is not None:
            raise ConnectionRefused(f"port {ports[port]} of {dst} is already fed by {occupant}")
        if self.g.has_edge(src, dst):
            raise ConnectionRefused(f"{src} already feeds {dst}; the same tensor on both inputs is redundant")
        if nx.has_path(self.g, dst, src):
            raise ConnectionRefused(f"connecting {src} -> {dst} would create a cycle")

    # low-level mutators (emit events) -------------------------------------------
    def insert_node(self, node: str, prim: Primitive, pos: tuple[float, float] = (0.0, 0.0)) -> None:
        if node in self.g:
            raise ParamError(f"a node named {node!r} already exists")
        self.g.add_node(node, prim=prim, pos=tuple(pos))
        self._order = None
        self._emit(GraphEvent("node_added", node))

    def delete_node(self, node: str) -> None:
        for u, v, _port in [e for e in self.edges() if node in e[:2]]:
            self.delete_edge(u, v)
        self.g.remove_node(node)
        self._order = None
        self._emit(GraphEvent("node_removed", node))

    def insert_edge(self, src: str, dst: str, port: int) -> None:
        self.check_connect(src, dst, port)
        self.g.add_edge(src, dst, port=port)
        self._order = None
        self._emit(GraphEvent("edge_added", edge=(src, dst, port)))

    def delete_edge(self, src: str, dst: str) -> None:
        port = self.g.edges[src, dst]["port"]
        self.g.remove_edge(src, dst)
        self._order = None
        self._emit(GraphEvent("edge_removed", edge=(src, dst, port)))

    def replace_prim(self, node: str, prim: Primitive) -> None:
        old = self.prim(node)
        if len(prim.ports) < len(old.ports):
            raise ParamError(f"{node}: cannot drop input ports")
        self.g.nodes[node]["prim"] = prim
        self._emit(GraphEvent("params_changed", node))

    def set_pos(self, node: str, pos: tuple[float, float]) -> None:
        self.g.nodes[node]["pos"] = tuple(pos)
        self._emit(GraphEvent("moved", node))

    def set_declaration(self, **fields: Any) -> None:
        """Change input/output shapes, spatial count, variable kinds, name or bindings."""
        for key, value in fields.items():
            setattr(self, key, value)
        self._emit(GraphEvent("reset", data=dict(fields)))
