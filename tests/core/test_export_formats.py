"""Graphviz DOT of operator graphs and CSV of results: their structure, their escaping
of text from files, and that they parse back."""

from __future__ import annotations

import csv
import io
import re

from core.export import from_document, from_file, graph_dot, pareto_csv, results_csv
from core.ir.serialize import read_document
from core.store import Store
from tests.support import EXAMPLES

_NODE = re.compile(r'^  ("(?:[^"\\]|\\.)*"|input|output) \[(.*)\];$')
_EDGE = re.compile(r'^  ("(?:[^"\\]|\\.)*") -> ("(?:[^"\\]|\\.)*") \[label=("(?:[^"\\]|\\.)*")\];$')


def _statements(dot: str) -> tuple[list, list]:
    lines = dot.splitlines()
    assert lines[0].startswith("digraph ") and lines[0].endswith("{") and lines[-1] == "}"
    nodes = [m.group(1) for m in map(_NODE.match, lines) if m]
    edges = [m.groups() for m in map(_EDGE.match, lines) if m]
    assert len(nodes) + len(edges) + 5 == len(lines)  # header, rankdir, node and edge defaults, closing brace
    return nodes, edges


def test_dot_has_every_node_and_wire_with_shapes():
    item = from_file(EXAMPLES / "gated_separable.json")
    nodes, edges = _statements(graph_dot(item))
    assert len(nodes) == len(item.graph.g.nodes) and len(edges) == len(item.graph.edges())
    assert ('"gate"', '"apply_gate"', '"[H, W] = 56x56 (lhs)"') in edges
    assert (
        '"vertical" [label="vertical\\nfc(out=C_out, groups=G)\\n[C_out, H, W] = 64x56x56", style="rounded"];'
        in graph_dot(item)
    )


def test_dot_quotes_names_and_ids_from_files():
    document = read_document(EXAMPLES / "shift_conv.json")
    old = document["nodes"][0]["id"]
    new = 'evil"] ; x -> y [label="\\\nz'
    document["name"] = 'my "op"'
    document["nodes"][0]["id"] = new
    for edge in document["edges"]:
        edge["from"], edge["to"] = (
            (new if edge["from"] == old else edge["from"]),
            (new if edge["to"] == old else edge["to"]),
        )
    dot = graph_dot(from_document(document, "test"))
    nodes, _edges = _statements(dot)
    assert dot.splitlines()[0] == 'digraph "my \\"op\\"" {'
    assert '"evil\\"] ; x -> y [label=\\"\\\\\\nz"' in nodes


def _store(path) -> Store:
    store = Store(path)
    for i, name in enumerate(("conv2d", "grouped_conv", "shift_conv")):
        doc = read_document(EXAMPLES / f"{name}.json")
        oid = store.add_operator(doc, f"={name}" if i == 2 else name, "search:mcts" if i else "hand-made")
        store.add_measurement(
            oid, None, {"latency_ms": 1.0 + i, "flops": 3e6 - i * 1e6 + (i == 1) * 2e6, "bindings": doc["bindings"]}
        )
    return store


def test_results_csv_parses_back_with_every_row_and_column(tmp_path):
    with _store(tmp_path / "r.db") as store:
        text = results_csv(store)
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == 3 and list(rows[0]) == list(store.db["results"].columns_dict)
        assert [r["operator_name"] for r in rows] == ["conv2d", "grouped_conv", "'=shift_conv"]  # no formula
        assert [float(r["latency_ms"]) for r in rows] == [1.0, 2.0, 3.0]
        assert rows[0]["bindings"] == '{"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3}'
        assert rows[0]["accuracy"] == ""


def test_pareto_csv_holds_the_front_only(tmp_path):
    with _store(tmp_path / "r.db") as store:
        rows = list(csv.DictReader(io.StringIO(pareto_csv(store, ["latency_ms", "flops"]))))
        # (1 ms, 3 MFLOPs) and (3 ms, 1 MFLOP) are on the front; (2 ms, 4 MFLOPs) is dominated by the first
        assert [(float(r["latency_ms"]), float(r["flops"])) for r in rows] == [(1.0, 3e6), (3.0, 1e6)]
        empty = list(csv.reader(io.StringIO(pareto_csv(store, ["latency_ms", "accuracy"]))))
        assert len(empty) == 1 and empty[0][0] == "result_key"
