"""Layered left-to-right layout: topological layers from networkx, each layer ordered by the
barycentre of its neighbours (fewer crossings), centred vertically. A graph of many layers
wraps onto rows, read like text (the editor draws a wire into the next row as a return), so
that it fills a canvas of the given shape instead of one long strip that only shows whole
too small to read."""

from __future__ import annotations

import math

import networkx as nx

from .graph import OUTPUT, OperatorGraph

X_GAP, Y_GAP = 250.0, 140.0
ROW_GAP = 160.0  # between the centre lines of a row's last and the next row's first nodes
CARD = (170.0, 120.0)  # about a card's size, for choosing the rows
CANVAS_ASPECT = 1.7  # width over height of the editor's canvas on a common screen
SWEEPS = 4


def layered_layout(graph: OperatorGraph, aspect: float | None = CANVAS_ASPECT) -> dict[str, tuple[float, float]]:
    """Positions of the nodes; with `aspect` (width / height of where it will show), the
    layers wrap onto as many rows as make the graph largest when fitted there (None: one row)."""
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
    spans = [(len(nodes) - 1) * Y_GAP for nodes in layers]  # each layer's height, centre to centre
    per_row = len(layers) if aspect is None else _layers_per_row(spans, aspect)
    rows = [spans[i : i + per_row] for i in range(0, len(layers), per_row)]
    tops = [0.0]  # the centre line of each row's topmost nodes
    for heights in rows[:-1]:
        tops.append(tops[-1] + max(heights) + ROW_GAP)
    positions = {}
    for n in g.nodes:
        row, column = divmod(layer[n], per_row)
        middle = tops[row] + max(rows[row]) / 2
        positions[n] = (column * X_GAP, middle + (index[n] - (len(layers[layer[n]]) - 1) / 2) * Y_GAP)
    return positions


def lay_out_if_stacked(graph: OperatorGraph) -> bool:
    """Give the nodes a layered layout when two of them share a position (a file written without
    positions, as programs write them): stacked cards hide each other, and a view must draw every
    one of them wherever it looks. Whether it did."""
    positions = [graph.pos(n) for n in graph.g.nodes]
    if len(set(positions)) == len(positions):
        return False
    for node, pos in layered_layout(graph).items():
        graph.set_pos(node, pos)
    return True


def _layers_per_row(spans: list[float], aspect: float) -> int:
    """How many layers a row holds so that the graph, fitted into a box of `aspect`, is largest."""

    def scale(per_row: int) -> float:
        rows = [spans[i : i + per_row] for i in range(0, len(spans), per_row)]
        width = (per_row - 1) * X_GAP + CARD[0]
        height = sum(max(row) for row in rows) + (len(rows) - 1) * ROW_GAP + CARD[1]
        return min(aspect / width, 1 / height)

    choices = sorted({math.ceil(len(spans) / rows) for rows in range(1, len(spans) + 1)}, reverse=True)
    return max(choices, key=scale)  # the first best: the fewest rows among equals
