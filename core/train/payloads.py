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
from .sequential import SeedRule
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
    with `pair`, compare it seed by seed with the original network: `original_operator` in the
    backbone (the discovery loop's template; None: the backbone as it is) under
    `original_settings` (None: `settings`; a narrowed network pairs with the full-width original).
    `original` holds its test accuracies for the first of `seeds` when they are known already
    (the discovery loop tests the original over its seed rule's first look); the job finds the
    others in the store, where an earlier test job trained them, or trains them itself (and its
    result keeps them for the next job). With a `rule` (core.train.sequential), `seeds` are those
    it may take, in order: it trains them a few at a time and stops once the paired interval
    decides, or at the rule's cap."""

    kind = "test"
    operator: dict | None  # None: the backbone as it is
    settings: EvalSettings = field(default_factory=EvalSettings)
    training: TrainConfig = field(default_factory=TrainConfig)
    seeds: tuple[int, ...] = field(default_factory=lambda: report_seeds(0, SEEDS))
    pair: bool = True
    original: tuple[float | None, ...] | None = None  # of the first len(original) seeds
    original_operator: dict | None = None
    original_settings: EvalSettings | None = None
    margin: float = 0.01  # judged by the paired interval: within when it lies above -margin
    rule: SeedRule | None = None  # add seeds until the interval decides (None: all of `seeds`)

    def __post_init__(self):
        super().__post_init__()
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            refuse(self, "seeds", "distinct seeds, at least one", self.seeds)
        if self.rule is not None and (not self.pair or len(self.seeds) < self.rule.cap):
            refuse(self, "rule", f"a paired test with the rule's {self.rule.cap} seeds", self.seeds)
        if self.rule is not None and self.rule.margin != self.margin:
            refuse(self, "rule", f"judged against the payload's margin {self.margin}", self.rule.margin)
        if self.original is not None and len(self.original) > len(self.seeds):
            refuse(self, "original", f"at most one accuracy per seed ({len(self.seeds)})", self.original)
        if not 0 <= self.margin <= 1:
            refuse(self, "margin", "a fraction between 0 and 1", self.margin)


@dataclass(frozen=True)
class E2EPayload(Payload):
    kind = "e2e"
    operator: dict | None  # None: the backbone as it is (narrowed by deploy.scale, the FLOPs-matched original)
    deploy: DeploySettings  # where and how both networks are tuned and timed
    settings: EvalSettings = field(default_factory=EvalSettings)  # what the score is recorded under
    tuning_root: str | None = None  # where the tuning databases are (None: the user's)
