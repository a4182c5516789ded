"""What timing a network with the operator against the original finds (core.networks.end_to_end
makes it; an "e2e" job's result carries it beside its score, core.train.results), in a module
without torch or TVM, so that job results can carry it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..data.conv_fit import Replacement
from ..store import InvalidResult
from ..typed_json import JsonRecord, refuse


@dataclass(frozen=True)
class KernelSchedule:
    """Where one kernel's schedule came from: 'database', 'transfer:<schedule>', 'tuned', 'default
    kept' (TVM's default beat what transfer or tuning found) or 'untuned' (TVM's default, nothing
    searched); `latency_ms` as recorded (None when untuned)."""

    kernel: str  # relax's name for the task, e.g. "fused_conv2d_add_relu"
    weight: int  # how many times one forward pass runs it
    kernel_class: str
    source: str
    latency_ms: float | None


@dataclass(frozen=True)
class OperatorKernel:
    """One of the operator's kernels timed inside the network, against its time alone (the
    tuning record's): whether the network runs it as tuned."""

    kernel: str
    in_network_ms: float  # per call
    alone_ms: float | None
    ratio: float | None  # in_network_ms / alone_ms


@dataclass(frozen=True)
class EndToEnd(JsonRecord):
    """Both networks at the deployment size, tuned and timed in the same run with the same
    threads: TVM's latency of each, PyTorch's eager latency of each, and every kernel's schedule."""

    what = "the end-to-end timing"
    error = InvalidResult

    deploy: str  # the deployment size, e.g. 'resnet18/w64@32px'
    threads: int  # TVM's and PyTorch's while timed: as many as were free
    load: float  # the machine's load average when it finished
    latency_ms: float  # the network with the operator
    latency_std_ms: float
    baseline_latency_ms: float  # the original network
    baseline_std_ms: float
    torch_latency_ms: float  # PyTorch's eager time of the network with the operator (its fastest round)
    torch_baseline_ms: float  # and of the original
    torch_speedup: float  # the original's eager time over the candidate's: the median of the rounds' ratios
    max_abs_error: float  # of TVM's network with the operator against PyTorch's
    timing_note: str | None  # why its timing cannot be trusted, None when it can
    untuned_kernels: tuple[str, ...]  # kernels of either network left with TVM's default
    kernels: tuple[KernelSchedule, ...]  # the network with the operator
    baseline_kernels: tuple[KernelSchedule, ...]
    operator_kernels: tuple[OperatorKernel, ...]
    replacement: Replacement
    #: the original's time over the candidate's: the median of their per-round ratios in
    #: interleaved rounds and its 95% interval (None in results made before they were kept;
    #: keyword-only, so that a result extending this one may add fields of its own)
    speedup: float | None = field(default=None, kw_only=True)
    speedup_low: float | None = field(default=None, kw_only=True)
    speedup_high: float | None = field(default=None, kw_only=True)

    def __post_init__(self):
        super().__post_init__()
        for name in ("latency_ms", "baseline_latency_ms", "torch_latency_ms", "torch_baseline_ms"):
            if not getattr(self, name) > 0:
                refuse(self, name, "a positive number", getattr(self, name))

    @property
    def tuned(self) -> bool:
        """Both networks ran with tuned kernels only: a speed-up counts only then."""
        return not self.untuned_kernels
