"""NAS-PTE's legality rule for architecture-changing loop transformations (bottleneck, group):
the backbone with the transformed operator in place of its standard convs must keep at least
the original network's Fisher Potential over the replaced layers. Ordinary transformations are
judged by data dependences (core.analysis.legality); these need a network, data and torch, so
they run in worker processes (core.jobs.isolate) and benchmarks."""

from __future__ import annotations

from collections.abc import Mapping

from core.analysis.fisher import FisherError
from core.analysis.legality import ILLEGAL, LEGAL, check_sequence
from core.codegen.loopnest_ir import result_operator
from core.ir.graph import OperatorGraph
from core.ir.sequence import sequence_from_document
from core.ir.serialize import content_hash

from .screening import FisherScreen, screen_for
from .settings import EvalSettings


class CapacityJudge:
    """Verdicts of one screen, cached per operator (content and bindings), so screening many
    sequences costs one forward and backward pass per distinct operator."""

    def __init__(self, settings: EvalSettings | None = None):
        self.screen: FisherScreen = screen_for(settings or EvalSettings())
        self._verdicts: dict[str, dict] = {}

    @property
    def scored(self) -> int:
        """Distinct operators scored so far."""
        return len(self._verdicts)

    def __call__(self, graph: OperatorGraph) -> dict:
        """{candidate, original, passes, replaced} for an operator graph; an operator whose
        output ignores its input has no Fisher Potential: it fails, with candidate None and the
        reason (FisherError's message)."""
        key = content_hash(graph) + repr(sorted(graph.bindings.items()))
        if key not in self._verdicts:
            net, report = self.screen.candidate(graph, shared=True)
            theirs = sum(self.screen.original[name] for name in report.replaced)
            verdict: dict = {"original": theirs, "replaced": list(report.replaced)}
            try:
                score = self.screen.score(net, report)
            except FisherError as e:
                verdict.update(candidate=None, passes=False, reason=str(e))
            else:
                verdict.update(candidate=score["fisher_potential"], passes=score["fisher_passes"])
            self._verdicts[key] = verdict
        return self._verdicts[key]


def capacity_checks(
    document: dict, bindings: Mapping[str, int] | None = None, settings: dict | None = None
) -> list[dict]:
    """Fisher Potential after each architecture-changing step of a sequence, against the
    original network: JSON in and out, for core.jobs.isolate.call_in_subprocess."""
    seq = sequence_from_document(document)
    report = check_sequence(seq, bindings)
    judge = None
    results = []
    for s in report.steps:
        if not s.step.changes_architecture or s.after is None:
            continue
        entry = {"step": s.index, "text": s.step.text()}
        judge = judge or CapacityJudge(EvalSettings.from_payload(settings or {}))
        verdict = judge(result_operator(s.after, seq.name or "sequence").graph)
        entry.update(
            status=LEGAL if verdict["passes"] else ILLEGAL,
            **verdict,
            message=f"no Fisher Potential: {verdict['reason']}"
            if "reason" in verdict
            else f"Fisher Potential {verdict['candidate']:.4g} "
            f"{'>=' if verdict['passes'] else '<'} original {verdict['original']:.4g} "
            f"over {len(verdict['replaced'])} replaced layer(s)",
        )
        results.append(entry)
    return results
