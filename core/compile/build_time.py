"""Whether building an operator's kernel with TVM will take minutes, said before it starts.
TVM's build time grows with the operator's nodes (each a stage of the kernel): measured with
`tessera measure` (untuned) on chains of ReLUs on a busy 2-core machine (load 12-14), a
100-node chain took 32 s in all and a 400-node one 181 s; a 5,000-node one was still building
after 300 s."""

from __future__ import annotations

from ..ir.graph import INPUT, OUTPUT, OperatorGraph

#: nodes from which a build is said to take minutes
SLOW_BUILD_NODES = 300


def slow_build_note(graph: OperatorGraph, cancel: str) -> str | None:
    """A sentence saying the build will take minutes and how to cancel it (`cancel`, e.g.
    'Ctrl-C cancels it'), or None for an operator of fewer than SLOW_BUILD_NODES nodes."""
    nodes = sum(1 for node in graph.g.nodes if node not in (INPUT, OUTPUT))
    if nodes < SLOW_BUILD_NODES:
        return None
    return (
        f"{graph.name or 'the operator'} has {nodes:,} nodes: building its kernel with TVM will take "
        f"minutes, the longer the more nodes; {cancel}"
    )
