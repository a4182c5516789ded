"""The payloads of the compile side's job kinds, "measure" and "transfer": what the window,
the CLI and searches queue and what a worker reads back (core.jobs.contract refuses an
unknown, missing or mistyped field). Importing this imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jobs.contract import Payload
from .algorithms import algorithm, no_sequence
from .errors import CompileError

COST_MODELS = ("xgb", "random")


def _whole(name: str, value: int, low: int) -> None:
    if value < low:
        kind = "non-negative" if low == 0 else "positive"
        raise CompileError(f"{name} must be a {kind} integer, got {value!r}")


@dataclass(frozen=True)
class _Timed(Payload):
    """What every kernel timing takes: the operator, its sizes, where, and how long to time."""

    operator: dict
    bindings: dict[str, int] = field(default_factory=dict)
    device: str = "local"  # "local" or an RPC device named in the store ...
    device_config: dict | None = None  # ... described here, so a worker needs no store
    batch: int = 1
    repeat: int = 10
    min_repeat_ms: float = 100.0
    tuning_root: str | None = None  # where tuning databases are kept (None: the user's)

    def __post_init__(self):
        bad = {k: v for k, v in self.bindings.items() if isinstance(v, bool) or not isinstance(v, int)}
        if bad:
            raise CompileError(f"bindings must be whole numbers, got {bad}")
        _whole("batch", self.batch, 1)
        _whole("repeat", self.repeat, 1)
        if self.min_repeat_ms < 0:
            raise CompileError(f"min_repeat_ms must be a non-negative number of milliseconds, got {self.min_repeat_ms}")


@dataclass(frozen=True)
class MeasurePayload(_Timed):
    """Measure an operator with TVM's default schedule (tune_trials 0) or tune it with
    MetaSchedule first; `algorithm` names how its kernel is built (core.compile.algorithms)."""

    kind = "measure"
    tune_trials: int = 0
    cost_model: str = "xgb"
    algorithm: str = "default"
    tiles: tuple[int, int] | None = None  # [T_O, T_I], gspc only
    sequence: dict | None = None  # the transformation sequence the operator came from (its schedule an algorithm)

    def __post_init__(self):
        super().__post_init__()
        _whole("tune_trials", self.tune_trials, 0)
        if algorithm(self.algorithm).needs_sequence and self.sequence is None:
            raise CompileError(no_sequence(self.algorithm))
        if self.cost_model not in COST_MODELS:
            raise CompileError(f"cost_model must be one of {', '.join(COST_MODELS)}, got {self.cost_model!r}")
        if self.tiles is not None and min(self.tiles) < 1:
            raise CompileError(f"tiles must be two positive integers [T_O, T_I], got {list(self.tiles)}")


@dataclass(frozen=True)
class TransferPayload(_Timed):
    """Tune an operator by reusing tuned schedules of its kernel class from `sources`
    (tuning folders or results stores; None: the tuning root), `top_k` per tuned kernel."""

    kind = "transfer"
    sources: tuple[str, ...] | None = None
    top_k: int = 1

    def __post_init__(self):
        super().__post_init__()
        _whole("top_k", self.top_k, 1)
        if self.sources is not None and (not self.sources or not all(self.sources)):
            raise CompileError(
                f"sources must be a non-empty list of tuning folders or results stores, got {list(self.sources)}"
            )
