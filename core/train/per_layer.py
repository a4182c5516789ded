"""NAS-PTE's layer-wise choice: each layer gets the cheapest candidate that keeps its capacity.

Each candidate is scored once, in every layer it fits (FisherScreen: one network build, one
forward and backward pass); a layer's score depends on its own activations and gradients, so
the candidate's score at a layer is read from that network, as NAS-PTE reads per-layer Fisher
Potential. A layer then gets, among the candidates whose score there is at least the original
network's score there, the one with the fewest FLOPs at that layer, or, when a `timing` is
given (core.networks.layer_latency), the one whose kernel ran fastest there: only the layers where
two or more candidates pass are timed; a layer no candidate passes keeps its conv. Imports
torch: worker processes, commands and benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from core.analysis.fisher import FisherError, passes_fisher
from core.analysis.summary import summarize
from core.data.assignment import Assignment
from core.data.conv_fit import ConvShape, layer_bindings
from core.ir.graph import OperatorGraph

from .errors import EvaluationError
from .screening import FisherScreen

#: (candidate, layer) pairs -> the latency in ms of the candidate's kernels standing in for the
#: layer, or why it could not be timed (core.networks.layer_latency.LayerLatency)
Timing = Callable[[list[tuple[OperatorGraph, str]]], dict[tuple[str, str], float | str]]


@dataclass(frozen=True)
class LayerVerdict:
    """One candidate at one layer: its score there against the original's, its FLOPs there,
    and its kernels' latency there when timed."""

    operator: str
    fisher: float
    original: float
    flops: int
    latency_ms: float | None = None

    @property
    def passes(self) -> bool:
        return passes_fisher(self.fisher, self.original)

    def text(self) -> str:
        sign = ">=" if self.passes else "<"
        timed = "" if self.latency_ms is None else f", {self.latency_ms:.4g} ms"
        return f"{self.operator} {self.fisher:.3g} {sign} {self.original:.3g}, {self.flops / 1e6:.3g} MFLOPs{timed}"


def layer_flops(graph: OperatorGraph, layer: ConvShape) -> int:
    """FLOPs of the operator standing in for one layer (m copies when it gives C_out / m channels)."""
    summary = _sized(graph, layer)
    return int(summary.numeric_cost["flops"]) * _copies(summary, layer)


def layer_copies(graph: OperatorGraph, layer: ConvShape) -> int:
    """How many times the operator runs standing in for a layer (m when it gives C_out / m channels)."""
    return _copies(_sized(graph, layer), layer)


def _sized(graph: OperatorGraph, layer: ConvShape):
    summary = summarize(graph, layer_bindings(graph, layer))
    if summary.numeric_cost is None or summary.numeric_shapes is None:
        raise EvaluationError(f"{graph.name}: no FLOPs at {layer}: {summary.binding_error}")
    return summary


def _copies(summary, layer: ConvShape) -> int:
    return max(1, layer.c_out // summary.numeric_shapes["output"][0])


def assign_per_layer(
    candidates: Sequence[OperatorGraph], screen: FisherScreen, name: str = "per-layer", timing: Timing | None = None
) -> Assignment:
    """The assignment NAS-PTE's rule gives over the screen's backbone, with a reason per layer:
    by FLOPs, or by latency where `timing` times the candidates that pass at a layer.
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
    if timing is not None:
        verdicts = _timed(verdicts, {g.name: g for g in candidates}, timing, left_out)
    chosen, reasons = {}, {}
    for layer, found in verdicts.items():
        timed = timing is not None and sum(v.passes for v in found) > 1
        passing = sorted((v for v in found if v.passes), key=lambda v: (v.latency_ms or 0.0) if timed else v.flops)
        others = "; ".join([v.text() for v in found if not v.passes] + left_out[layer])
        if passing:
            chosen[layer] = passing[0].operator
            rule = "fastest passing" if timed else "cheapest passing" if timing is None else "the only one passing"
            reasons[layer] = f"{rule}: {'; '.join(v.text() for v in passing)}" + (
                f" (fail: {others})" if others else ""
            )
        else:
            untimed = any(": not timed: " in note for note in left_out[layer])
            reasons[layer] = f"conv kept, no candidate passes{' that could be timed' if untimed else ''}: {others}"
    operators = {g.name: g for g in candidates if g.name in chosen.values()}
    return Assignment(screen.settings.backbone, operators, chosen, reasons, name)


def _timed(
    verdicts: dict[str, list[LayerVerdict]], graphs: dict[str, OperatorGraph], timing: Timing, left_out: dict
) -> dict[str, list[LayerVerdict]]:
    """The verdicts with the latency of every candidate passing at a layer where two or more
    pass (where there is a choice to make); one that could not be timed is left out there."""
    contested = {layer: [v for v in found if v.passes] for layer, found in verdicts.items()}
    contested = {layer: passing for layer, passing in contested.items() if len(passing) > 1}
    times = timing([(graphs[v.operator], layer) for layer, passing in contested.items() for v in passing])
    result: dict[str, list[LayerVerdict]] = {}
    for layer, found in verdicts.items():
        result[layer] = []
        for v in found:
            time = times.get((v.operator, layer), "no time came back") if layer in contested and v.passes else None
            if isinstance(time, str):
                left_out[layer].append(f"{v.operator}: not timed: {time}")
                continue
            result[layer].append(replace(v, latency_ms=time))
    return result
