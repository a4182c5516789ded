"""What an evaluation job is about, besides the operator: dataset, backbone and its size,
seed. Plain JSON in job payloads; importing this module does not import torch, so the
CLI and the GUI can build payloads and store labels cheaply."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from core.data.datasets import DEFAULT_DATASET
from core.data.specs import BackboneSpec

from .errors import EvaluationError


@dataclass(frozen=True)
class EvalSettings:
    dataset: str = DEFAULT_DATASET
    backbone: str = "resnet18"
    width: int = 16
    resolution: int = 16
    seed: int = 0
    val_fraction: float = 0.2
    limit: int | None = None  # keep this many examples (stratified) before splitting
    fisher_batch: int = 64

    def __post_init__(self):
        for name in ("width", "resolution", "fisher_batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise EvaluationError(f"evaluation setting {name} must be a whole number >= 1, got {value!r}")
        if self.limit is not None and (
            isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 10
        ):
            raise EvaluationError(f"evaluation setting limit must be a whole number >= 10, got {self.limit!r}")
        if (
            isinstance(self.val_fraction, bool)
            or not isinstance(self.val_fraction, (int, float))
            or not 0 < self.val_fraction < 1
        ):
            raise EvaluationError(f"evaluation setting val_fraction must be between 0 and 1, got {self.val_fraction!r}")
        if not isinstance(self.dataset, str) or not self.dataset:
            raise EvaluationError(f"evaluation setting dataset must be 'digits' or a path, got {self.dataset!r}")
        _ = self.spec  # checks backbone, width and resolution (BackboneError)

    @classmethod
    def from_payload(cls, payload: dict) -> EvalSettings:
        return cls(**{k: payload[k] for k in cls.__dataclass_fields__ if k in payload})

    def to_payload(self) -> dict:
        return asdict(self)

    @property
    def spec(self) -> BackboneSpec:
        return BackboneSpec(self.backbone, self.width, self.resolution)

    @property
    def dataset_label(self) -> str:
        """The dataset as scores record it: name (a path's last part) and resolution."""
        return f"{Path(self.dataset).name}@{self.resolution}px"
