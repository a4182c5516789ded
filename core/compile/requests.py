"""What one Evaluate or Tune request queues for one operator at one set of sizes: the job
kinds and payloads (core.compile.jobs), for the GUI's dialog and `tessera submit` alike.

A request measures TVM's default schedule, tunes with MetaSchedule (trials > 0), reuses
tuned schedules of the operator's kernel class (transfer), or compares the algorithm x
tuned/untuned variants (variants). Building the payloads imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass

from ..devices import Device
from .errors import CompileError
from .jobs import variant_payloads

MEASURE, TRANSFER = "measure", "transfer"


@dataclass(frozen=True)
class MeasureRequest:
    device: str = "local"  # a device of the store (core.devices)
    bindings_sets: tuple[dict[str, int], ...] = ()  # empty: each target's own bindings
    trials: int = 0  # MetaSchedule trials; 0 measures the default schedule
    transfer: bool = False  # reuse tuned schedules of the same kernel class
    sources: tuple[str, ...] = ()  # transfer: tuning folders or results stores (default:
    # the tuning folder)
    top_k: int = 1  # transfer: schedules tried per tuned kernel
    variants: bool = False  # every algorithm, untuned and (trials > 0) tuned

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

    def jobs(self, document: dict, bindings: dict[str, int], device: Device) -> tuple[list[tuple[str, dict]], str]:
        """[(kind, payload)] for one operator document at `bindings`, and a note on what
        was left out ('' if nothing): variants name why an algorithm does not apply."""
        base = {"operator": document, "bindings": dict(bindings), **device.job_fields()}
        if self.transfer:
            payload = {**base, "top_k": self.top_k}
            if self.sources:
                payload["sources"] = list(self.sources)
            return [(TRANSFER, payload)], ""
        payload = {**base, "tune_trials": self.trials}
        if not self.variants:
            return [(MEASURE, payload)], ""
        payloads, skipped = variant_payloads(payload)
        return [(MEASURE, p) for p in payloads], skipped
