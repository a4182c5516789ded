"""One measurement of an operator's kernel: what measuring, tuning and transfer-tuning
(core.compile) return, what a measure or transfer job keeps as its result, and what the store
records (core.store.records reads the row it keeps from it).

`latency_ms` is the one field every measurement has; the others default to "not known"
(None, 0, empty), so a measurement made elsewhere (a test, an import) records what it knows.
Reading one from JSON refuses an unknown or missing field, or a value of the wrong type,
with an InvalidResult naming the field (core.typed_json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..typed_json import JsonRecord, refuse
from .errors import InvalidResult


@dataclass(frozen=True)
class Measurement(JsonRecord):
    what = "the measurement"
    error = InvalidResult

    latency_ms: float  # time of one call of the kept kernel: its fastest round (core.compile.rounds)
    latency_std_ms: float | None = None
    latency_runs_ms: tuple[float, ...] = ()  # mean time of one call, per timed round
    gflops: float | None = None  # achieved; derived from flops and latency_ms when absent
    max_abs_error: float | None = None  # largest difference of the kernel's output from PyTorch's
    timing_note: str | None = None  # why a timing cannot be trusted ('in doubt: ...'), None when it can

    # what was measured
    operator: str | None = None  # the operator's name
    bindings: dict[str, int] = field(default_factory=dict)  # every size it was built at
    batch: int = 1
    flops: float | None = None  # of one run at these bindings and batch
    params: float | None = None
    target: str | None = None  # the TVM target it was built for (JSON)
    threads: int | None = None  # the threads its kernel ran on (here: its faster count of those free)
    load: float | None = None  # the machine's load average when it was timed

    # how its kernel was built (core.compile.algorithms)
    algorithm: str | None = None  # 'default' (TVM's lowering), 'gspc' (grouped spatial pack), ...
    layout: str | None = None  # data layout of the kernel, e.g. 'NCHW'
    schedule_source: str | None = None  # 'untuned', 'tuned', 'transfer:<database> trial <n>', ...
    tuned: bool = False  # a tuned or reused schedule was kept
    algorithm_details: dict[str, Any] = field(default_factory=dict)  # what the algorithm chose (gspc: tiles)

    # PyTorch's module on the same input, this machine only (None on an RPC device)
    torch_latency_ms: float | None = None
    torch_latency_std_ms: float | None = None
    torch_gflops: float | None = None
    torch_threads: int | None = None  # the threads PyTorch ran on: its faster count of those free
    #: PyTorch's time over the kernel's: the median of their ratios in interleaved rounds, and its
    #: 95% interval; derived as torch_latency_ms / latency_ms when absent (no interval then)
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None

    # tuning from scratch (MetaSchedule, or an algorithm's own search such as gspc's tile grid)
    trials: tuple[tuple[int, float], ...] = ()  # (trial index, latency ms) of every trial that ran
    trial_count: int | None = None  # trials spent, failed ones included (None: len(trials))
    new_trials: int = 0  # of them, measured by this run (the others came from its database)
    best_trial_ms: float | None = None
    cost_model: str | None = None
    tuning_dir: str | None = None  # the database, reused by later runs and by transfer-tuning

    # transfer-tuning (core.compile.transfer): found, applied, skipped and why, the candidates,
    # the sources ranked, the speed-up over untuned and the search time
    transfer: dict[str, Any] | None = None

    def __post_init__(self):
        super().__post_init__()
        for name in ("latency_ms", "torch_latency_ms"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                refuse(self, name, "a positive number", value)
        for index, latency in self.trials:
            if index < 0 or not latency > 0:
                refuse(self, "trials", "[trial index >= 0, latency ms > 0] pairs", [index, latency])
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in self.bindings.values()):
            refuse(self, "bindings", "an object of whole numbers such as {'C_in': 64}", self.bindings)
        positive = ("batch", "threads", "torch_threads")
        for name in (*positive, "new_trials", "trial_count"):
            value = getattr(self, name)
            if value is not None and value < (1 if name in positive else 0):
                refuse(self, name, "a positive whole number" if name in positive else "a whole number >= 0", value)
        for name in ("algorithm", "layout", "schedule_source", "timing_note"):
            if getattr(self, name) == "":
                refuse(self, name, "a non-empty string or null", "")


def speedup_text(speedup: float | None, low: float | None = None, high: float | None = None, *, sign: str = "x") -> str:
    """A speedup as every view shows it: with its 95% interval where it has one ('3.10x [2.95,
    3.31]'), '' when there is none; `sign` after the number ("×" in the window)."""
    if speedup is None:
        return ""
    interval = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    return f"{speedup:.2f}{sign}{interval}"
