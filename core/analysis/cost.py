"""FLOPs, MACs and parameter counts, per node and in total, symbolic and numeric.

Conventions: a contraction (fc, or share + its reduces) costs 2 FLOPs per MAC;
element-wise work costs one FLOP per output element; views are free."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..ir.graph import OperatorGraph
from ..ir.symbolic import Poly, Size
from .contraction import contraction_chains
from .shapes import ShapeReport


@dataclass(frozen=True)
class NodeCost:
    macs: Size
    flops: Size
    params: Size


@dataclass
class CostReport:
    nodes: dict[str, NodeCost]

    def total(self, field: str) -> Poly:
        return Poly(getattr(c, field) for c in self.nodes.values())

    def numeric(self, bindings: Mapping[str, int]) -> dict:
        """{'macs', 'flops', 'params'} as integers plus the same per node."""
        per_node = {
            n: {f: getattr(c, f).to_int(bindings) for f in ("macs", "flops", "params")} for n, c in self.nodes.items()
        }
        totals = {f: sum(v[f] for v in per_node.values()) for f in ("macs", "flops", "params")}
        return {**totals, "nodes": per_node}


def operator_cost(graph: OperatorGraph, report: ShapeReport) -> CostReport:
    """Costs of every node that has a shape (nodes after an error are skipped)."""
    shares = contraction_chains(graph)
    absorbed = {r for chain in shares.values() for r in chain}
    nodes: dict[str, NodeCost] = {}
    for node in graph.primitive_nodes():
        if node not in report.shapes:
            continue
        prim = graph.prim(node)
        inputs = [report.shapes[s] for s in graph.inputs_of(node)]
        out = report.shapes[node]
        macs, flops = prim.macs(inputs, out), prim.flops(inputs, out)
        if node in absorbed:
            flops = Size(0)  # the accumulation is counted with its share
        elif shares.get(node):
            flops = macs * 2
        weight = prim.weight_shape(inputs, out)
        params = Size(0)
        if weight is not None:
            params = Size(1)
            for s in weight:
                params = params * s
        nodes[node] = NodeCost(macs, flops, params)
    return CostReport(nodes)
