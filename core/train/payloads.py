"""The payloads of the accuracy side's job kinds: "fisher" (Fisher Potential at
initialisation), "train" (then proxy training, early-stopped against the best curve known
when it was queued) and "e2e" (the network with the operator against the original, both
with tuned kernels, at a deployment size). `operator` is an operator document, or an
assignment document (core.data.assignment: operators per layer).
Importing this imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jobs.contract import Payload
from ..networks.settings import DeploySettings
from .settings import EvalSettings, TrainConfig


@dataclass(frozen=True)
class FisherPayload(Payload):
    kind = "fisher"
    operator: dict
    settings: EvalSettings = field(default_factory=EvalSettings)  # the proxy network and data


@dataclass(frozen=True)
class TrainPayload(Payload):
    kind = "train"
    operator: dict
    settings: EvalSettings = field(default_factory=EvalSettings)
    training: TrainConfig = field(default_factory=TrainConfig)
    best_curve: tuple[float, ...] | None = None  # accuracy per epoch to early-stop against


@dataclass(frozen=True)
class E2EPayload(Payload):
    kind = "e2e"
    operator: dict
    deploy: DeploySettings  # where and how both networks are tuned and timed
    settings: EvalSettings = field(default_factory=EvalSettings)  # what the score is recorded under
    tuning_root: str | None = None  # where the tuning databases are (None: the user's)
