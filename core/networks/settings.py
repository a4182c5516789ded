"""Where and how a network with an operator is timed against the original: the deployment
size and the tuning budget. Plain JSON in job payloads; importing this module imports
neither torch nor TVM, so the CLI and the window build payloads cheaply."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from core.errors import TesseraError

from ..data.errors import BackboneError
from ..data.specs import BACKBONE_NAMES, DEFAULT_REPLACE, BackboneSpec, replace_kinds

#: the width each backbone is published at (its first stage's channels); deployment's default
STANDARD_WIDTH = {"resnet18": 64, "resnet34": 64, "vgg": 64, "mobilenetv2": 32}
DEPLOY_RESOLUTION = 32  # CIFAR's images: the size Canvas and Syno report CPU latency at
USERS_RESOLUTION = 224  # ImageNet's images: the size users deploy at (bench_discovery's deploy section)


class DeployError(TesseraError):
    """The deployment settings are not usable."""


@dataclass(frozen=True)
class DeploySettings:
    """Where and how the networks are timed. trials: MetaSchedule trials per kernel still
    untuned (0: reuse and transfer only); transfer: reuse schedules of kernels of the same
    class (the operator tuned on its own, other networks); sources: where from (tuning
    folders or results stores; default the tuning root)."""

    backbone: str = "resnet18"
    width: int | None = None  # None: STANDARD_WIDTH
    resolution: int = DEPLOY_RESOLUTION
    trials: int = 32
    transfer: bool = True
    sources: tuple[str, ...] = ()
    top_k: int = 1
    cost_model: str = "xgb"
    repeat: int = 10
    min_repeat_ms: float = 100.0
    num_classes: int = 10
    seed: int = 0
    replace: tuple[str, ...] = DEFAULT_REPLACE  # the kinds of convolution the operator stands in for
    scale: float = 1.0  # width multiplier (BackboneSpec): the original narrowed, timed against itself at 1

    def __post_init__(self):
        if self.backbone not in BACKBONE_NAMES:
            raise DeployError(f"unknown backbone {self.backbone!r}; choose one of {', '.join(BACKBONE_NAMES)}")
        try:
            object.__setattr__(self, "replace", replace_kinds(self.replace))  # a list read from JSON as well
        except BackboneError as e:
            raise DeployError(f"deployment setting replace: {e}") from None
        for name, low in (("trials", 0), ("top_k", 1), ("repeat", 1), ("resolution", 8), ("num_classes", 2)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise DeployError(f"deployment setting {name} must be a whole number >= {low}, got {value!r}")
        try:
            _ = self.spec  # built once here: BackboneError names a bad width multiplier
        except BackboneError as e:
            raise DeployError(f"deployment settings: {e}") from None

    @property
    def spec(self) -> BackboneSpec:
        width = self.width or STANDARD_WIDTH[self.backbone]
        return BackboneSpec(self.backbone, width, self.resolution, self.replace, self.scale)

    @property
    def label(self) -> str:
        """e.g. 'resnet18/w64@32px': what the scores record as the deployment size."""
        return f"{self.spec.label}@{self.resolution}px"

    def to_payload(self) -> dict:
        """Its fields as JSON; `replace` and `scale` only when not the default, so that settings
        made before they existed keep their discovery run's key."""
        payload = {**asdict(self), "sources": list(self.sources), "replace": list(self.replace)}
        later = {"replace": DEFAULT_REPLACE, "scale": 1.0}
        return {k: v for k, v in payload.items() if k not in later or getattr(self, k) != later[k]}

    @classmethod
    def from_payload(cls, payload: dict) -> DeploySettings:
        """From a job payload's "deploy" object; DeployError names a field it does not know."""
        if not isinstance(payload, dict):
            raise DeployError(f"the deployment settings must be an object, got {payload!r}")
        unknown = sorted(set(payload) - set(cls.__dataclass_fields__))
        if unknown:
            raise DeployError(f"unknown deployment setting(s) {', '.join(unknown)}")
        sources = payload.get("sources", ())
        if not isinstance(sources, (list, tuple)) or not all(isinstance(x, str) for x in sources):
            raise DeployError(f"deployment setting sources must be a list of paths, got {sources!r}")
        return cls(**{**payload, "sources": tuple(sources)})
