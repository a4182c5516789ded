"""What one Evaluate or Tune request queues: for each operator and set of sizes, the
measure or transfer jobs (core.compile.handlers), for the window's dialog, `tessera submit` and
`tessera tune` alike (through core.jobs.submit).

A request measures TVM's default schedule, tunes with MetaSchedule (trials > 0), reuses
tuned schedules of the operator's kernel class (transfer), or compares the algorithm x
tuned/untuned variants (variants). Building the payloads imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..analysis.summary import why_not_measurable
from ..devices import Device, get_device
from ..ir.bindings import format_bindings
from ..ir.graph import OperatorGraph
from ..jobs.submit import PlannedJob, Subject
from ..store import Store
from .algorithms import ALGORITHMS, algorithms_for
from .errors import CompileError
from .payloads import MeasurePayload, TransferPayload


def variant_payloads(payload: MeasurePayload, graph: OperatorGraph) -> tuple[list[MeasurePayload], str]:
    """The payloads comparing algorithm x tuned/untuned for one operator (`graph`: the payload's
    operator, read already), sizes and device: every algorithm that can run it
    (core.compile.algorithms), untuned and (with tune_trials > 0) tuned. -> (payloads, why
    the others were left out, or "")."""
    runs, refused = algorithms_for(graph, {**graph.bindings, **payload.bindings}, payload.sequence is not None)
    return [
        replace(
            payload,
            algorithm=name,
            tune_trials=budget,
            tiles=payload.tiles if ALGORITHMS[name].tiles else None,
        )
        for name in runs
        for budget in sorted({0, payload.tune_trials})
    ], "; ".join(refused)


@dataclass(frozen=True)
class MeasureRequest:
    subjects: tuple[Subject, ...] = ()  # the operators (the window adds them to a dialog's request)
    device: str = "local"  # a device of the store (core.devices)
    bindings_sets: tuple[dict[str, int], ...] = ()  # empty: each subject's own bindings
    trials: int = 0  # MetaSchedule trials; 0 measures the default schedule
    transfer: bool = False  # reuse tuned schedules of the same kernel class
    sources: tuple[str, ...] = ()  # transfer: tuning folders or results stores (default:
    # the tuning folder)
    top_k: int = 1  # transfer: schedules tried per tuned kernel
    variants: bool = False  # every algorithm, untuned and (trials > 0) tuned
    algorithm: str = "default"  # without variants: how the kernel is built
    cost_model: str = "xgb"
    repeat: int = 10
    min_repeat_ms: float = 100.0
    tuning_root: str | None = None  # where tuning databases are kept (None: the user's)

    def __post_init__(self):
        if self.transfer and (self.trials or self.variants):
            raise CompileError("transfer-tuning reuses schedules: it takes neither a trial budget nor variants")
        if self.top_k < 1:
            raise CompileError(f"schedules per tuned kernel must be at least 1, got {self.top_k}")

    def describe(self) -> str:
        """'evaluate', 'tune (32 trials)', 'tune with reused schedules', '... variants'."""
        if self.transfer:
            return "tune with reused schedules"
        what = f"tune ({self.trials} trials)" if self.trials else "evaluate"
        return f"{what}, comparing variants" if self.variants else what

    def payloads(
        self, subject: Subject, bindings: dict[str, int], device: Device
    ) -> tuple[list[MeasurePayload | TransferPayload], str]:
        """The payloads for one operator at `bindings`, and a note on what was left out ('' if
        nothing): variants name why an algorithm does not apply."""
        where = {
            "operator": subject.document,
            "bindings": dict(bindings),
            **device.job_fields(),
            "repeat": self.repeat,
            "min_repeat_ms": self.min_repeat_ms,
            "tuning_root": self.tuning_root,
        }
        if self.transfer:
            sources = tuple(self.sources) or None
            return [TransferPayload(**where, sources=sources, top_k=self.top_k)], ""
        payload = MeasurePayload(
            **where,
            tune_trials=self.trials,
            cost_model=self.cost_model,
            algorithm=self.algorithm,
            sequence=subject.sequence,
        )
        if not self.variants:
            return [payload], ""
        variants, skipped = variant_payloads(payload, subject.graph)
        return list(variants), skipped

    def plan(self, store: Store) -> tuple[list[PlannedJob], list[str]]:
        """Every subject at every bindings set; nothing if one subject cannot take the request."""
        device = get_device(store, self.device)
        planned, notes = [], []
        for subject in self.subjects:
            operator_id, version = subject.save(store)
            graph = subject.graph
            for bindings in self.bindings_sets or (subject.bindings or {},):
                problem = why_not_measurable(graph, {**graph.bindings, **bindings}, names=False)
                if problem:  # refused now, not later by a worker
                    raise CompileError(f"{subject.name} cannot be built at {format_bindings(bindings)}: {problem}")
                payloads, note = self.payloads(subject, bindings, device)
                if note and f"{subject.name}: {note}" not in notes:
                    notes.append(f"{subject.name}: {note}")
                planned += [PlannedJob(p, operator_id, device.id, subject.input_key, version) for p in payloads]
        return planned, notes
