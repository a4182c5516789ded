"""Shared fixtures: paths to the examples and a small graph builder."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.ir.editing import Editor
from core.ir.graph import OperatorGraph

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES


def chain(input_shape, output_shape, steps, variables=None, bindings=None) -> OperatorGraph:
    """Build a graph from (node, op, params, [sources]) steps; the last node feeds the output."""
    g = OperatorGraph(input_shape, output_shape, variables=variables)
    g.bindings = dict(bindings or {})
    ed = Editor(g)
    for node, op, params, srcs in steps:
        ed.add_node(op, params, node=node)
        for port, s in enumerate(srcs):
            ed.connect(s, node, port)
    ed.connect(steps[-1][0], "output")
    return g
