"""How one operator is measured: its batch, the algorithm and its tile sizes (or the sequence
whose schedule it runs), the tuning budget and where tuning records go, and how long timings
run. Imports no TVM."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .algorithms import ALGORITHMS, algorithm, no_sequence
from .errors import CompileError


@dataclass(frozen=True)
class Settings:
    batch: int = 1
    tune_trials: int = 0
    cost_model: str = "xgb"
    work_dir: Path | None = None  # tuning database; required when tune_trials > 0
    repeat: int = 10
    min_repeat_ms: float = 100.0
    seed: int = 0
    algorithm: str = "default"  # a name of core.compile.algorithms
    tiles: tuple[int, int] | None = None  # (T_O, T_I) of a tiled algorithm; None: its defaults or its tuning's choice
    sequence: dict | None = None  # the transformation sequence the operator came from, if known

    def __post_init__(self):
        if algorithm(self.algorithm).needs_sequence and self.sequence is None:
            raise CompileError(no_sequence(self.algorithm))
        if not algorithm(self.algorithm).tiles and self.tiles is not None:
            tiled = " or ".join(repr(a.name) for a in ALGORITHMS.values() if a.tiles)
            raise CompileError(f"tile sizes (T_O, T_I) apply to algorithm {tiled} only, not {self.algorithm!r}")

    def tuning_folder(self) -> Path:
        """Where tuning keeps its records (a request to tune names one)."""
        if self.work_dir is None:
            raise CompileError("tuning needs a folder for its records (work_dir)")
        return self.work_dir
