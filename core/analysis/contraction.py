"""Contractions and reduce chains: a share followed by a chain of reduces is one weighted
contraction (an einsum), and reduces that follow one another are one sum. Cost counts each
as one reduction and code generators emit it as one instead of materialising the steps."""

from __future__ import annotations

from ..ir.graph import OperatorGraph
from ..ir.primitives import Reduce, Share


def reduction_chains(graph: OperatorGraph) -> dict[str, list[str]]:
    """Head -> the reduces that consume it one after another, each the only consumer of the
    previous: every share (its chain possibly empty), then every reduce no chain took."""
    chains: dict[str, list[str]] = {}
    taken: set[str] = set()
    primitive = set(graph.primitive_nodes())
    nodes = [n for n in graph.topological_order() if n in primitive]
    for node in [n for n in nodes if isinstance(graph.prim(n), Share)] + nodes:
        if node in chains or node in taken or not isinstance(graph.prim(node), (Share, Reduce)):
            continue
        chain, cur = [], node
        while True:
            succ = list(graph.g.successors(cur))
            if len(succ) != 1 or succ[0] not in graph.g or not isinstance(graph.g.nodes[succ[0]]["prim"], Reduce):
                break
            cur = succ[0]
            chain.append(cur)
        chains[node] = chain
        taken.update(chain)
    return chains


def contraction_chains(graph: OperatorGraph) -> dict[str, list[str]]:
    """share node -> the reduces that consume it one after another (possibly empty)."""
    return {n: c for n, c in reduction_chains(graph).items() if isinstance(graph.prim(n), Share)}
