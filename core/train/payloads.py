"""The payloads of the accuracy side's job kinds: "fisher" (Fisher Potential at
initialisation), "train" (then proxy training, early-stopped against the best curve known
when it was queued), "test" (trained again over seeds, tested on the test split, paired with
the original) and "e2e" (the network with the operator against the original, both
with tuned kernels, at a deployment size). `operator` is an operator document, or an
assignment document (core.data.assignment: operators per layer).
Importing this imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jobs.contract import Payload
from ..networks.settings import DeploySettings
from ..typed_json import refuse
from .paired import SEEDS, report_seeds
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
class HeldOutPayload(Payload):
    """Train the network again with each of `seeds` and test it on the test split (core.train.seeds);
    with `pair`, compare it seed by seed with the original network, the backbone as it is:
    `original` holds its test accuracies with the same seeds when they are known already (the
    discovery loop tests the original once), else the job trains it too."""

    kind = "test"
    operator: dict | None  # None: the backbone as it is
    settings: EvalSettings = field(default_factory=EvalSettings)
    training: TrainConfig = field(default_factory=TrainConfig)
    seeds: tuple[int, ...] = field(default_factory=lambda: report_seeds(0, SEEDS))
    pair: bool = True
    original: tuple[float | None, ...] | None = None
    margin: float = 0.01  # judged by the paired interval: within when it lies above -margin

    def __post_init__(self):
        super().__post_init__()
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            refuse(self, "seeds", "distinct seeds, at least one", self.seeds)
        if self.original is not None and len(self.original) != len(self.seeds):
            refuse(self, "original", f"one accuracy per seed ({len(self.seeds)})", self.original)
        if not 0 <= self.margin <= 1:
            refuse(self, "margin", "a fraction between 0 and 1", self.margin)


@dataclass(frozen=True)
class E2EPayload(Payload):
    kind = "e2e"
    operator: dict | None  # None: the backbone as it is (narrowed by deploy.scale, the FLOPs-matched original)
    deploy: DeploySettings  # where and how both networks are tuned and timed
    settings: EvalSettings = field(default_factory=EvalSettings)  # what the score is recorded under
    tuning_root: str | None = None  # where the tuning databases are (None: the user's)
