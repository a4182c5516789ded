"""NAS-PTE's layer-wise choice: each layer gets the cheapest candidate that keeps its capacity.

Each candidate is scored once, in every layer it fits (FisherScreen: one network build, one
forward and backward pass); a layer's score depends on its own activations and gradients, so
the candidate's score at a layer is read from that network, as NAS-PTE reads per-layer Fisher
Potential. A layer then gets, among the candidates whose score there is at least the original
network's score there, the one with the fewest FLOPs at that layer; a layer no candidate
passes keeps its conv. Imports torch: worker processes, commands and benchmarks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.analysis.fisher import FisherError, passes_fisher
from core.analysis.summary import summarize
from core.data.assignment import Assignment
from core.data.replacement import ConvShape, layer_bindings
from core.ir.graph import OperatorGraph

from .errors import EvaluationError
from .screening import FisherScreen


@dataclass(frozen=True)
class LayerVerdict:
    """One candidate at one layer: its score there against the original's, its FLOPs there."""

    operator: str
    fisher: float
    original: float
    flops: int

    @property
    def passes(self) -> bool:
        return passes_fisher(self.fisher, self.original)

    def text(self) -> str:
        sign = ">=" if self.passes else "<"
        return f"{self.operator} {self.fisher:.3g} {sign} {self.original:.3g}, {self.flops / 1e6:.3g} MFLOPs"


def layer_flops(graph: OperatorGraph, layer: ConvShape) -> int:
    """FLOPs of the operator standing in for one layer (m copies when it gives C_out / m channels)."""
    summary = summarize(graph, layer_bindings(graph, layer))
    if summary.numeric_cost is None or summary.numeric_shapes is None:
        raise EvaluationError(f"{graph.name}: no FLOPs at {layer}: {summary.binding_error}")
    channels = summary.numeric_shapes["output"][0]
    return int(summary.numeric_cost["flops"]) * max(1, layer.c_out // channels)


def assign_per_layer(candidates: Sequence[OperatorGraph], screen: FisherScreen, name: str = "per-layer") -> Assignment:
    """The assignment NAS-PTE's rule gives over the screen's backbone, with a reason per layer.
    Candidates need distinct names; one that fits no layer or has no score is left out (its
    reason is given at every layer)."""
    names = [g.name for g in candidates]
    if not candidates or len(set(names)) < len(names) or not all(names):
        raise EvaluationError(f"per-layer assignment needs candidates with distinct names, got {names}")
    verdicts: dict[str, list[LayerVerdict]] = {layer: [] for layer in screen.original}
    left_out: dict[str, list[str]] = {layer: [] for layer in screen.original}
    for graph in candidates:
        try:
            net, report = screen.candidate(graph, shared=True)
            layers = screen.score(net, report)["fisher_layers"]
        except (EvaluationError, FisherError) as e:
            for notes in left_out.values():
                notes.append(f"{graph.name}: {e}")
            continue
        flops: dict[ConvShape, int] = {}
        for outcome in report.layers:
            if outcome.name not in verdicts:
                continue
            if not outcome.replaced:
                left_out[outcome.name].append(f"{graph.name}: {outcome.detail}")
                continue
            if outcome.shape not in flops:  # layers of one shape cost the same: sized once
                flops[outcome.shape] = layer_flops(graph, outcome.shape)
            verdicts[outcome.name].append(
                LayerVerdict(graph.name, layers[outcome.name], screen.original[outcome.name], flops[outcome.shape])
            )
    chosen, reasons = {}, {}
    for layer, found in verdicts.items():
        passing = sorted((v for v in found if v.passes), key=lambda v: v.flops)
        others = "; ".join([v.text() for v in found if not v.passes] + left_out[layer])
        if passing:
            chosen[layer] = passing[0].operator
            reasons[layer] = f"cheapest passing: {'; '.join(v.text() for v in passing)}" + (
                f" (fail: {others})" if others else ""
            )
        else:
            reasons[layer] = f"conv kept, no candidate passes: {others}"
    operators = {g.name: g for g in candidates if g.name in chosen.values()}
    return Assignment(screen.settings.backbone, operators, chosen, reasons, name)
