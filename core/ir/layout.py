"""Layered left-to-right layout: topological layers from networkx, each layer
ordered by the barycentre of its neighbours (fewer crossings), centred vertically."""

from __future__ import annotations

import networkx as nx

from .graph import OUTPUT, OperatorGraph

X_GAP, Y_GAP = 250.0, 140.0
SWEEPS = 4


def layered_layout(graph: OperatorGraph) -> dict[str, tuple[float, float]]:
    g = graph.g
    layer = {n: depth for depth, nodes in enumerate(nx.topological_generations(g)) for n in nodes}
    if g.in_degree(OUTPUT) == 0:  # keep an unconnected output on the right
        layer[OUTPUT] = max(layer.values()) + 1
    layers: list[list[str]] = [[] for _ in range(max(layer.values()) + 1)]
    for n in graph.topological_order():
        layers[layer[n]].append(n)
    index = {n: i for nodes in layers for i, n in enumerate(nodes)}

    def reorder(nodes: list[str], neighbours) -> None:
        def key(n):
            near = [index[m] for m in neighbours(n)]
            return sum(near) / len(near) if near else index[n]

        nodes.sort(key=key)
        index.update({n: i for i, n in enumerate(nodes)})

    for _ in range(SWEEPS):  # barycentre heuristic: sweep right, then left
        for nodes in layers[1:]:
            reorder(
                nodes, lambda n: [m for m in g.predecessors(n) if layer[m] == layer[n] - 1] or list(g.predecessors(n))
            )
        for nodes in reversed(layers[:-1]):
            reorder(nodes, lambda n: list(g.successors(n)))
    return {n: (layer[n] * X_GAP, (index[n] - (len(layers[layer[n]]) - 1) / 2) * Y_GAP) for n in g.nodes}
