"""Layered left-to-right layout: networkx's multipartite layout over topological layers."""
from __future__ import annotations

import networkx as nx

from .graph import OUTPUT, OperatorGraph

X_GAP, Y_GAP = 200.0, 120.0


def layered_layout(graph: OperatorGraph) -> dict[str, tuple[float, float]]:
    g = nx.DiGraph()
    g.add_nodes_from(graph.g.nodes)
    g.add_edges_from(graph.g.edges())
    layer = {n: depth for depth, nodes in enumerate(nx.topological_generations(g)) for n in nodes}
    if g.in_degree(OUTPUT) == 0:  # keep an unconnected output on the right
        layer[OUTPUT] = max(layer.values()) + 1
    nx.set_node_attributes(g, layer, "layer")
    pos = nx.multipartite_layout(g, subset_key="layer", align="vertical", scale=1.0, center=(0, 0))
    widest = max(sum(1 for v in layer.values() if v == d) for d in set(layer.values()))
    y_scale = Y_GAP * max(widest - 1, 1) / 2
    return {n: (layer[n] * X_GAP, round(float(-y) * y_scale, 1)) for n, (_, y) in pos.items()}
