"""Undoable edits of an operator graph (Qt-free; the GUI's undo actions call these).

Each command records only the change it makes. A macro groups several commands
into one undo step (e.g. deleting a selection with its edges)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .graph import INPUT, OUTPUT, OperatorGraph
from .primitives import make
from .symbolic import parse_size


class Command:
    @property
    def text(self) -> str:
        """What the Edit menu's Undo and Redo name (a class's own words, or made from its fields)."""
        return ""

    def redo(self, g: OperatorGraph) -> None:
        raise NotImplementedError

    def undo(self, g: OperatorGraph) -> None:
        raise NotImplementedError


@dataclass
class AddNode(Command):
    node: str
    op: str
    params: dict
    pos: tuple[float, float]

    @property
    def text(self):
        return f"Add {self.op}"

    def redo(self, g):
        g.insert_node(self.node, make(self.op, self.params), self.pos)

    def undo(self, g):
        g.delete_node(self.node)


@dataclass
class RemoveNode(Command):
    node: str
    op: str = ""
    params: dict = field(default_factory=dict)
    pos: tuple[float, float] = (0.0, 0.0)

    text = "Delete node"

    def redo(self, g):
        prim = g.prim(self.node)
        self.op, self.params, self.pos = prim.op, dict(prim.params), g.pos(self.node)
        g.delete_node(self.node)

    def undo(self, g):
        g.insert_node(self.node, make(self.op, self.params), self.pos)


@dataclass
class Connect(Command):
    src: str
    dst: str
    port: int
    text = "Connect"

    def redo(self, g):
        g.insert_edge(self.src, self.dst, self.port)

    def undo(self, g):
        g.delete_edge(self.src, self.dst)


@dataclass
class Disconnect(Command):
    src: str
    dst: str
    port: int = 0
    text = "Disconnect"

    def redo(self, g):
        self.port = g.g.edges[self.src, self.dst]["port"]
        g.delete_edge(self.src, self.dst)

    def undo(self, g):
        g.insert_edge(self.src, self.dst, self.port)


@dataclass
class SetParams(Command):
    node: str
    new: dict
    old: dict = field(default_factory=dict)
    text = "Change parameters"

    def redo(self, g):
        prim = g.prim(self.node)
        self.old = {k: prim.params[k] for k in self.new}
        g.replace_prim(self.node, prim.with_params(**self.new))

    def undo(self, g):
        g.replace_prim(self.node, g.prim(self.node).with_params(**self.old))


@dataclass
class Move(Command):
    moves: dict[str, tuple[tuple[float, float], tuple[float, float]]]  # node -> (old, new)
    text = "Move"

    def redo(self, g):
        for n, (_, new) in self.moves.items():
            g.set_pos(n, new)

    def undo(self, g):
        for n, (old, _) in self.moves.items():
            g.set_pos(n, old)


#: how a graph-level declaration is named in the window's Undo and Redo
DECLARED = {
    "input_shape": "input shape",
    "output_shape": "output shape",
    "spatial": "spatial axes",
    "variables": "variable kinds",
}


@dataclass
class Declare(Command):
    """Change graph-level declarations (input/output shapes, variables, bindings)."""

    new: dict[str, Any]
    old: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """What the Edit menu's Undo names: 'Change bindings', 'Change input shape, name'."""
        return "Change " + ", ".join(DECLARED.get(key, key) for key in self.new)

    def redo(self, g):
        self.old = {k: getattr(g, k) for k in self.new}
        g.set_declaration(**self.new)

    def undo(self, g):
        g.set_declaration(**self.old)


@dataclass
class Macro(Command):
    title: str  # its text, as one undo step
    commands: list[Command] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.title

    def redo(self, g):
        done: list[Command] = []
        try:
            for c in self.commands:
                c.redo(g)
                done.append(c)
        except Exception:  # leave the graph as it was
            for c in reversed(done):
                c.undo(g)
            raise

    def undo(self, g):
        for c in reversed(self.commands):
            c.undo(g)


class UndoStack:
    """Linear history with a clean index, so 'modified' survives undo back to the save point."""

    def __init__(self, graph: OperatorGraph, on_change: Callable[[], None] | None = None):
        self.graph = graph
        self._done: list[Command] = []
        self._undone: list[Command] = []
        self._clean: int | None = 0
        self.on_change = on_change

    def push(self, cmd: Command) -> None:
        """Execute and record; a command that fails leaves the graph unchanged."""
        cmd.redo(self.graph)
        if self._clean is not None and self._clean > len(self._done):
            self._clean = None  # the saved state was in the redo branch this push discards
        self._done.append(cmd)
        self._undone.clear()
        self._changed()

    def undo(self) -> None:
        if self._done:
            cmd = self._done.pop()
            cmd.undo(self.graph)
            self._undone.append(cmd)
            self._changed()

    def redo(self) -> None:
        if self._undone:
            cmd = self._undone.pop()
            cmd.redo(self.graph)
            self._done.append(cmd)
            self._changed()

    def __len__(self) -> int:
        """Number of steps that can be undone."""
        return len(self._done)

    @property
    def can_undo(self) -> bool:
        return bool(self._done)

    @property
    def can_redo(self) -> bool:
        return bool(self._undone)

    @property
    def undo_text(self) -> str:
        return self._done[-1].text if self._done else ""

    @property
    def redo_text(self) -> str:
        return self._undone[-1].text if self._undone else ""

    def set_clean(self) -> None:
        self._clean = len(self._done)
        self._changed()

    @property
    def modified(self) -> bool:
        return self._clean != len(self._done)

    def _changed(self) -> None:
        if self.on_change:
            self.on_change()


class Editor:
    """The editing API used by the GUI, the CLI and tests: every call is one undo step."""

    def __init__(self, graph: OperatorGraph, on_change: Callable[[], None] | None = None):
        self.graph = graph
        self.undo_stack = UndoStack(graph, on_change)

    def add_node(self, op: str, params: dict | None = None, pos=(0.0, 0.0), node: str | None = None) -> str:
        params = dict(params or {})
        if op == "fc" and "out" not in params:
            params["out"] = self.graph.next_dynamic_variable()
        make(op, params)  # validate before recording
        node = node or self.graph.new_id(op)
        self.undo_stack.push(AddNode(node, op, params, tuple(pos)))
        return node

    def connect(self, src: str, dst: str, port: int = 0) -> None:
        self.undo_stack.push(Connect(src, dst, port))

    def disconnect(self, src: str, dst: str) -> None:
        self.undo_stack.push(Disconnect(src, dst))

    def set_params(self, node: str, **params) -> None:
        make(self.graph.prim(node).op, {**self.graph.prim(node).params, **params})
        self.undo_stack.push(SetParams(node, params))

    def move(self, positions: dict[str, tuple[float, float]]) -> None:
        moves = {n: (self.graph.pos(n), (p[0], p[1])) for n, p in positions.items() if self.graph.pos(n) != tuple(p)}
        if moves:
            self.undo_stack.push(Move(moves))

    def declare(self, **fields) -> None:
        self.undo_stack.push(Declare(fields))

    def choose(self, var: str, value: str) -> None:
        """Give a dynamic variable its value everywhere a size parameter uses it (e.g. an fc's
        out=x1 becomes out=C_out): one undo step. SizeError if `value` is not a size."""
        replacement = {var: parse_size(value)}
        cmds: list[Command] = []
        for n in self.graph.primitive_nodes():
            prim = self.graph.prim(n)
            new = {
                p.name: str(parse_size(str(prim.params[p.name])).subs(replacement))
                for p in prim.spec
                if p.kind == "size" and prim.params[p.name] not in (None, "") and var in str(prim.params[p.name])
            }
            new = {k: v for k, v in new.items() if v != str(prim.params[k])}
            if new:
                cmds.append(SetParams(n, new))
        if cmds:
            self.undo_stack.push(Macro(f"Choose {var} = {value}", cmds))

    def remove(self, nodes: Sequence[str] = (), edges: Sequence[tuple[str, str]] = ()) -> None:
        """Delete nodes (with their edges) and edges as one undo step."""
        nodes = [n for n in nodes if n not in (INPUT, OUTPUT)]
        edge_set = {(u, v) for u, v in edges}
        for n in nodes:
            edge_set |= {(u, v) for u, v, _ in self.graph.edges() if n in (u, v)}
        cmds: list[Command] = [Disconnect(u, v) for u, v in sorted(edge_set)]
        cmds += [RemoveNode(n) for n in nodes]
        if not cmds:
            return
        self.undo_stack.push(Macro(f"Delete {len(nodes)} node(s)" if nodes else "Delete edge(s)", cmds))

    def undo(self) -> None:
        self.undo_stack.undo()

    def redo(self) -> None:
        self.undo_stack.redo()

    @property
    def modified(self) -> bool:
        return self.undo_stack.modified


__all__ = [
    "AddNode",
    "Command",
    "Connect",
    "Declare",
    "Disconnect",
    "Editor",
    "Macro",
    "Move",
    "RemoveNode",
    "SetParams",
    "UndoStack",
]
