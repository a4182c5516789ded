"""The versioned JSON file format for operators, its validation and canonical form.

Loading only parses JSON and checks it field by field; nothing from a file is
ever executed. Every error names the file and the offending element."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import TesseraError, shorten, shown

from ..atomic import write_text_atomically
from .errors import FormatError
from .graph import INPUT, OUTPUT, OperatorGraph
from .primitives import REGISTRY, make
from .symbolic import MAX_SIZE, VarKind, parse_size

FORMAT = "tessera.operator"
VERSION = 1


# -- reading ---------------------------------------------------------------------
def read_operator(path: str | Path) -> tuple[dict, OperatorGraph]:
    """A file's document and its graph, read and checked once (FormatError naming the file)."""
    doc = read_json(path)
    return doc, graph_from_document(doc, str(path))


def read_json(path: str | Path) -> Any:
    """A Tessera file's JSON, not yet checked as any kind of document (FormatError naming the file)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise FormatError(f"{path}: cannot read ({e})") from None
    return load_json(text, str(path))


def read_document(path: str | Path) -> dict:
    """Parse and validate a file; returns the document dict (FormatError otherwise)."""
    return read_operator(path)[0]


def load_json(text: str, source: str) -> Any:
    """Standard JSON only: NaN and Infinity are refused (other programs cannot read them), and
    so is nesting too deep to read (the message names the file either way). Every whole number
    in a Tessera file, whatever its field, lies within +-MAX_SIZE (2^31 - 1, the largest TVM
    indexes with 32 bits): a longer one never reaches Python's digit limit or a float overflow.
    A key given twice in one object is refused by name (JSON would keep the last silently, so a
    second `"nodes": []` would empty an operator)."""

    def refuse(token: str):
        raise FormatError(f"{source}: {token} is not JSON (write a finite number)")

    def whole(digits: str) -> int:
        if len(digits.lstrip("-")) > len(str(MAX_SIZE)) or abs(int(digits)) > MAX_SIZE:
            raise FormatError(
                f"{source}: the whole number {shorten(digits, 12)} is beyond +-(2^31 - 1), "
                "the largest a Tessera file may hold"
            )
        return int(digits)

    def unique(pairs: list[tuple[str, Any]]) -> dict:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise FormatError(f"{source}: the key {shown(key)} is given twice in one object; keep one")
            seen.add(key)
        return dict(pairs)

    try:
        return json.loads(text, parse_constant=refuse, parse_int=whole, object_pairs_hook=unique)
    except json.JSONDecodeError as e:
        raise FormatError(f"{source}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise FormatError(f"{source}: nested too deeply to read (arrays or objects inside each other)") from None


def parse_operator(text: str, source: str = "<document>") -> tuple[dict, OperatorGraph]:
    """A document's text read as JSON and checked as an operator, once: the document and its graph."""
    doc = load_json(text, source)
    return doc, graph_from_document(doc, source)


def parse_document(text: str, source: str = "<document>") -> dict:
    return parse_operator(text, source)[0]


def load_operator(path: str | Path) -> OperatorGraph:
    return read_operator(path)[1]


def check_header(doc: Any, fmt: str, version: int | tuple[int, ...], source: str) -> Callable[[str, str], FormatError]:
    """The checks every versioned Tessera document shares (an object, its format tag and
    version, or one of the versions this Tessera reads); returns fail(where, what) building
    errors that name `source`."""

    def fail(where: str, what: str) -> FormatError:
        return FormatError(f"{source}: {where}: {what}")

    if not isinstance(doc, dict):
        raise fail("top level", "expected a JSON object")
    if doc.get("format") != fmt:
        raise fail("format", f"expected {fmt!r}, got {shown(doc.get('format'))}")
    versions = (version,) if isinstance(version, int) else version
    if type(doc.get("version")) is not int or doc["version"] not in versions:  # not true, not 1.0
        known = " or ".join(map(str, versions))
        raise fail("version", f"this Tessera reads version {known}, the file has {shown(doc.get('version'))}")
    return fail


def refuse_unknown_fields(doc: dict, fields: set[str], fail) -> None:
    unknown = sorted(set(doc) - fields)
    if unknown:
        raise fail("top level", f"unknown field(s) {shorten(', '.join(unknown))}")


def graph_from_document(doc: Any, source: str = "<document>") -> OperatorGraph:
    fail = check_header(doc, FORMAT, VERSION, source)
    for key in ("input", "output", "nodes", "edges"):
        if key not in doc:
            raise fail(key, "missing field")
    refuse_unknown_fields(
        doc,
        {
            "format",
            "version",
            "name",
            "description",
            "notes",
            "variables",
            "input",
            "output",
            "bindings",
            "nodes",
            "edges",
        },
        fail,
    )

    variables = _obj(doc.get("variables", {}), "variables", fail)
    for name, kind in variables.items():
        if not isinstance(kind, str) or kind not in {k.value for k in VarKind}:
            raise fail(f"variables.{shorten(name)}", f"kind must be primary, coefficient or dynamic, got {shown(kind)}")
    inp, out = _obj(doc["input"], "input", fail), _obj(doc["output"], "output", fail)
    in_shape = _shape(inp.get("shape"), "input.shape", fail)
    out_shape = _shape(out.get("shape"), "output.shape", fail)
    spatial = inp.get("spatial", 2)
    if not isinstance(spatial, int) or isinstance(spatial, bool) or not 0 <= spatial <= len(in_shape):
        raise fail("input.spatial", f"must be an integer between 0 and {len(in_shape)}, got {shown(spatial)}")
    name = doc.get("name", "")
    if not isinstance(name, str):
        raise fail("name", "must be a string")
    notes = doc.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise fail("notes", "must be a list of strings (one paragraph each)")
    graph = OperatorGraph(
        in_shape,
        out_shape,
        spatial=spatial,
        variables=variables,
        name=name,
        description=str(doc.get("description", "")),
        notes=notes,
    )
    bindings = _obj(doc.get("bindings", {}), "bindings", fail)
    for k, v in bindings.items():
        if not isinstance(v, int) or isinstance(v, bool) or not 0 < v <= MAX_SIZE:
            raise fail(f"bindings.{shorten(k)}", f"must be a positive integer up to 2^31 - 1, got {shown(v)}")
    graph.bindings = dict(bindings)
    for key, node, obj in (("input", INPUT, inp), ("output", OUTPUT, out)):
        if "pos" in obj:
            graph.g.nodes[node]["pos"] = _pos(obj["pos"], f"{key}.pos", fail)

    if not isinstance(doc["nodes"], list):
        raise fail("nodes", "expected a list")
    for i, nd in enumerate(doc["nodes"]):
        where = f"nodes[{i}]"
        if not isinstance(nd, dict):
            raise fail(where, "expected an object")
        node_id, op = nd.get("id"), nd.get("op")
        if not isinstance(node_id, str) or not node_id:
            raise fail(where, "missing or empty 'id'")
        where = f"nodes[{i}] ({shown(node_id)})"
        if node_id in (INPUT, OUTPUT) or node_id in graph.g:
            raise fail(where, "duplicate or reserved node id")
        if not isinstance(op, str) or op not in REGISTRY:
            raise fail(where, f"unknown primitive {shown(op)} (known: {', '.join(sorted(REGISTRY))})")
        params = nd.get("params", {})
        if not isinstance(params, dict):
            raise fail(where, "'params' must be an object")
        pos = _pos(nd.get("pos", [0, 0]), f"{where}.pos", fail)
        try:
            prim = make(op, params)
        except TesseraError as e:
            raise fail(where, str(e)) from None
        graph.insert_node(node_id, prim, pos)

    if not isinstance(doc["edges"], list):
        raise fail("edges", "expected a list")
    for i, ed in enumerate(doc["edges"]):
        where = f"edges[{i}]"
        if not isinstance(ed, dict):
            raise fail(where, "expected an object")
        src, dst, port = ed.get("from"), ed.get("to"), ed.get("port", 0)
        if not isinstance(port, int) or isinstance(port, bool):
            raise fail(where, f"'port' must be an integer, got {shown(port)}")
        for end, n in (("from", src), ("to", dst)):
            if not isinstance(n, str) or n not in graph.g:
                raise fail(where, f"'{end}' names no node: {shown(n)}")
        assert isinstance(src, str) and isinstance(dst, str)  # checked just above
        try:
            graph.insert_edge(src, dst, port)
        except TesseraError as e:
            raise fail(f"{where} ({src} -> {dst})", str(e)) from None
    return graph


def _pos(value, where, fail) -> tuple[float, float]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) for p in value)
    ):
        raise fail(where, f"must be [x, y], two finite numbers, got {shown(value)}")
    return float(value[0]), float(value[1])


def _obj(value, where, fail) -> dict:
    if not isinstance(value, dict):
        raise fail(where, "expected an object")
    return value


def _shape(value, where, fail) -> list[str]:
    if not isinstance(value, list) or not value:
        raise fail(where, "expected a non-empty list of sizes")
    out = []
    for i, s in enumerate(value):
        if isinstance(s, int) and not isinstance(s, bool) and s > 0:
            s = str(s)
        if not isinstance(s, str):
            raise fail(f"{where}[{i}]", f"expected a size expression, got {shown(s)}")
        try:
            parse_size(s)
        except TesseraError as e:
            raise fail(f"{where}[{i}]", str(e)) from None
        out.append(s)
    return out


# -- writing ---------------------------------------------------------------------
def to_document(graph: OperatorGraph) -> dict:
    nodes = [
        {
            "id": n,
            "op": graph.prim(n).op,
            "params": dict(graph.prim(n).params),
            "pos": [round(c, 1) for c in graph.pos(n)],
        }
        for n in graph.topological_order()
        if n not in (INPUT, OUTPUT)
    ]
    edges = [{"from": u, "to": v, "port": p} for u, v, p in sorted(graph.edges())]
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "name": graph.name}
    if graph.description:
        doc["description"] = graph.description
    if graph.notes:
        doc["notes"] = list(graph.notes)
    doc["variables"] = {k: v.value for k, v in sorted(graph.variables.items())}
    doc["input"] = {
        "shape": list(graph.input_shape),
        "spatial": graph.spatial,
        "pos": [round(c, 1) for c in graph.pos(INPUT)],
    }
    doc["output"] = {"shape": list(graph.output_shape), "pos": [round(c, 1) for c in graph.pos(OUTPUT)]}
    if graph.bindings:
        doc["bindings"] = dict(graph.bindings)
    doc["nodes"], doc["edges"] = nodes, edges
    return doc


def save_operator(graph: OperatorGraph, path: str | Path) -> None:
    """Write the operator's file; a size that is a plain number is written as one ("groups": 4,
    not "4": the form a person writes; reading takes either)."""
    doc = to_document(graph)
    for node in doc["nodes"]:
        spec = {p.name: p.kind for p in graph.prim(node["id"]).spec}
        node["params"] = {
            name: int(value) if spec.get(name) == "size" and isinstance(value, str) and value.isdigit() else value
            for name, value in node["params"].items()
        }
    write_text_atomically(path, json.dumps(doc, indent=2, allow_nan=False) + "\n")


# -- identity --------------------------------------------------------------------
def canonical_document(doc: dict) -> dict:
    """The document without names, positions and bindings, nodes renamed n0, n1, ...
    in a deterministic topological order: equal operators give equal documents."""
    return canonical_form(graph_from_document(doc))


def canonical_form(graph: OperatorGraph) -> dict:
    """canonical_document of a graph already read."""
    key = _canonical_names(graph)
    nodes = [
        {"id": key[n], "op": graph.prim(n).op, "params": graph.prim(n).params}
        for n in sorted(graph.primitive_nodes(), key=lambda n: int(key[n][1:]))
    ]
    edges = sorted(
        ({"from": key[u], "to": key[v], "port": p} for u, v, p in graph.edges()), key=lambda e: (e["to"], e["port"])
    )
    return {
        "format": FORMAT,
        "version": VERSION,
        "variables": {k: v.value for k, v in sorted(graph.variables.items())},
        "input": {"shape": graph.input_shape, "spatial": graph.spatial},
        "output": {"shape": graph.output_shape},
        "nodes": nodes,
        "edges": edges,
    }


def canonical_graph(graph: OperatorGraph) -> OperatorGraph:
    """The graph of its canonical document (its nodes renamed n0, n1, ..., no positions or
    bindings) keeping its name, made from the graph rather than read again: lowered, equal
    operators give equal TVM stage names and share tuning databases."""
    canonical = canonical_form(graph)
    original = {new: old for old, new in _canonical_names(graph).items()}
    out = OperatorGraph(
        graph.input_shape, graph.output_shape, spatial=graph.spatial, variables=canonical["variables"], name=graph.name
    )
    for node in canonical["nodes"]:
        out.insert_node(node["id"], graph.prim(original[node["id"]]))
    for edge in canonical["edges"]:
        out.insert_edge(edge["from"], edge["to"], edge["port"])
    return out


def _canonical_names(graph: OperatorGraph) -> dict[str, str]:
    """Every node's canonical name: n0, n1, ... in a deterministic topological order (input
    and output keep theirs)."""
    g = graph.g
    key: dict[str, str] = {INPUT: "input"}

    def sort_key(n: str) -> str:
        prim = graph.prim(n)
        srcs = [key.get(s, "?") if s else "?" for s in graph.inputs_of(n)]
        return json.dumps([prim.op, prim.params, srcs], sort_keys=True)

    order: list[str] = []
    indeg = {n: g.in_degree(n) for n in g}
    ready = [n for n in g if indeg[n] == 0 and n != INPUT]
    frontier = [INPUT]
    while frontier:
        for n in frontier:
            for s in g.successors(n):
                indeg[s] -= 1
                if indeg[s] == 0 and s != OUTPUT:
                    ready.append(s)
        ready.sort(key=sort_key)
        frontier = ready[:1]
        ready = ready[1:]
        for n in frontier:
            key[n] = f"n{len(order)}"
            order.append(n)
    key[OUTPUT] = "output"
    for n in g:  # nodes unreachable from the input keep a stable name too
        key.setdefault(n, f"n{len(key)}")
    return key


def canonical_json(operator: dict | OperatorGraph) -> str:
    """The canonical form of an operator (its document, or its graph already read) as text."""
    graph = operator if isinstance(operator, OperatorGraph) else graph_from_document(operator)
    return json.dumps(canonical_form(graph), sort_keys=True, separators=(",", ":"))


def content_hash(operator: dict | OperatorGraph) -> str:
    """The operator's identity (its document, or its graph already read): equal operators, whatever
    their names, positions and bindings, have equal hashes."""
    return hashlib.sha256(canonical_json(operator).encode()).hexdigest()
