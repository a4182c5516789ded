"""FLOPs, MACs and parameter counts, per node and in total, symbolic and numeric.

Conventions: a contraction (fc, or share + its reduces) costs 2 FLOPs per MAC;
element-wise work costs one FLOP per output element, a sum or max one per term;
views are free.

The symbolic counts take every reduction as one stage. The kernel may stage a reduction
in two (Syno's rfactor, core.analysis.staging) where that does less work, and whether it
does depends on the sizes; so `numeric` counts the stages the kernel runs at the given
sizes, and the symbolic totals are what the kernel would do unstaged: never less."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..ir.graph import OperatorGraph
from ..ir.primitives import Share
from ..ir.symbolic import Poly, Size
from .contraction import reduction_chains
from .kernel_stages import staged_work
from .shapes import ShapeReport, concrete_shapes


@dataclass(frozen=True)
class NodeCost:
    macs: Size
    flops: Size
    params: Size


@dataclass
class CostReport:
    nodes: dict[str, NodeCost]
    graph: OperatorGraph
    shapes: ShapeReport

    def total(self, field: str) -> Poly:
        return Poly(getattr(c, field) for c in self.nodes.values())

    def numeric(self, bindings: Mapping[str, int], shapes: Mapping[str, tuple[int, ...]] | None = None) -> dict:
        """{'macs', 'flops', 'params'} as integers plus the same per node, reductions as the
        kernel stages them at these sizes (`shapes`: the concrete shapes, if known already)."""
        per_node = {
            n: {f: getattr(c, f).to_int(bindings) for f in ("macs", "flops", "params")} for n, c in self.nodes.items()
        }
        concrete = concrete_shapes(self.graph, self.shapes, bindings) if shapes is None else shapes
        for node, (macs, flops) in staged_work(self.graph, self.shapes, concrete, bindings).items():
            if node in per_node:
                per_node[node].update(macs=macs, flops=flops)
        totals = {f: sum(v[f] for v in per_node.values()) for f in ("macs", "flops", "params")}
        return {**totals, "nodes": per_node}


def operator_cost(graph: OperatorGraph, report: ShapeReport) -> CostReport:
    """Costs of every node that has a shape (nodes after an error are skipped)."""
    chains = reduction_chains(graph)
    absorbed = {r for chain in chains.values() for r in chain}
    nodes: dict[str, NodeCost] = {}
    for node in graph.primitive_nodes():
        if node not in report.shapes:
            continue
        prim = graph.prim(node)
        inputs = [report.shapes[s] for s in graph.inputs_of(node) if s is not None]  # a shaped node has all its inputs
        out = report.shapes[node]
        macs, flops = prim.macs(inputs, out), prim.flops(inputs, out)
        if node in absorbed:
            flops = Size(0)  # the accumulation is counted with the chain's head
        elif chains.get(node) and isinstance(prim, Share):
            flops = macs * 2  # a contraction: multiply and accumulate
        weight = prim.weight_shape(inputs, out)
        params = Size(0)
        if weight is not None:
            params = Size(1)
            for s in weight:
                params = params * s
        nodes[node] = NodeCost(macs, flops, params)
    return CostReport(nodes, graph, report)
