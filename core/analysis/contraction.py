"""Contractions: a share followed by a chain of reduces is one weighted
contraction (an einsum). Cost counts it as multiply-accumulates and code
generators emit it as one reduction instead of materialising the product."""

from __future__ import annotations

from ..ir.graph import OperatorGraph
from ..ir.primitives import Reduce, Share


def contraction_chains(graph: OperatorGraph) -> dict[str, list[str]]:
    """share node -> the reduces that consume it one after another (possibly empty)."""
    chains: dict[str, list[str]] = {}
    for node in graph.primitive_nodes():
        if not isinstance(graph.prim(node), Share):
            continue
        chain, cur = [], node
        while True:
            succ = list(graph.g.successors(cur))
            if len(succ) != 1 or succ[0] not in graph.g or not isinstance(graph.g.nodes[succ[0]]["prim"], Reduce):
                break
            cur = succ[0]
            chain.append(cur)
        chains[node] = chain
    return chains
