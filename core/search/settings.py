"""A search's settings, each one frozen dataclass read from JSON through core.typed_json (a
field it does not know, a missing one or one of the wrong type is refused by name), its
values checked when it is made:

- SearchSpace: what is searched (the template, the strategy, the budgets, the seed), which
  a plain search and a discovery run share and a strategy is made from (driver.make_strategy);
- SearchConfig: a plain search (`tessera search`, the window's Propose mode);
- DiscoveryConfig: a discovery run (`tessera discover`, the window's Discover mode), with
  `DiscoveryConfig.of`, which both build their runs with, so the same settings make the same
  run (and resume it) from either."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import cached_property

from ..networks.settings import DeploySettings
from ..train.paired import MARGIN, SEEDS, report_seeds
from ..train.sequential import DEFAULT_RULE, SeedRule
from ..train.settings import FISHER_THRESHOLD, EvalSettings, TrainConfig, proxy_task
from ..typed_json import JsonRecord
from .base import SearchError
from .strategies import EVALUATIONS, STRATEGIES


def _whole(record: object, name: str, low: int) -> None:
    value = getattr(record, name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
        raise SearchError(f"{name} must be a whole number >= {low}, got {value!r}")


def _number(record: object, name: str, low: float, strict: bool = False) -> None:
    value = getattr(record, name)
    if value is None:
        return
    bad = isinstance(value, bool) or not isinstance(value, (int, float)) or value < low or (strict and value == low)
    if bad:
        raise SearchError(f"{name} must be a {'positive number' if strict else f'number >= {low:g}'}, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class SearchSpace(JsonRecord):
    """What is searched: candidates replace the `template`, proposed by the `strategy` (a key of
    core.search.strategies.STRATEGIES) under FLOPs and parameter caps relative to it."""

    what = "the search settings"
    error = SearchError

    template: dict
    strategy: str = "canvas"
    budget_flops: float | None = 1.0
    budget_params: float | None = None
    max_primitives: int = 8
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.strategy not in STRATEGIES:
            raise SearchError(f"strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")
        _whole(self, "max_primitives", 0)
        for name in ("budget_flops", "budget_params"):
            _number(self, name, 0, strict=True)


@dataclass(frozen=True, kw_only=True)
class SearchConfig(SearchSpace):
    """A plain search: propose `samples` candidates (or for `minutes`), scored by `evaluate`
    (a key of EVALUATIONS; `evaluation`: the proxy task's EvalSettings and TrainConfig fields),
    a measurement job queued for each with `tune_trials` trials when set (0: untuned)."""

    samples: int | None = 20
    minutes: float | None = None
    evaluate: str = "none"
    tune_trials: int | None = None
    measure_bindings: dict = field(default_factory=dict)
    evaluation: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.evaluate not in EVALUATIONS:
            raise SearchError(f"evaluate must be one of {', '.join(EVALUATIONS)}, got {self.evaluate!r}")
        if self.samples is None and self.minutes is None:
            raise SearchError("give a number of samples or a time limit in minutes")
        for name in ("samples", "tune_trials"):
            _whole(self, name, 0)
        _number(self, "minutes", 0, strict=True)


@dataclass(frozen=True, kw_only=True)
class DiscoveryConfig(SearchSpace):
    """What one discovery run searches and how it judges. `evaluation`: the proxy task
    (EvalSettings' fields: dataset, backbone, width, resolution, ...) and training
    (TrainConfig's: epochs, theta, ...); `deploy`: where and how survivors are timed
    (core.networks.settings.DeploySettings' fields). `minutes` counts from when the original
    network's figures are known (training it is not spent from the budget)."""

    what = "the discovery settings"

    strategy: str = "mcts"
    minutes: float | None = 60.0
    samples: int | None = None
    in_flight: int = 2
    fisher: bool = True
    fisher_threshold: float = FISHER_THRESHOLD
    margin: float = MARGIN
    test_seeds: int = SEEDS  # a survivor's reported accuracy: seeds it and the original are trained with (0: none)
    seed_cap: int = DEFAULT_RULE.cap  # seeds added from test_seeds up to this until the verdict decides (0: fixed)
    references: bool = True  # hold every survivor against the narrowed original and depthwise-separable
    tune: bool = True
    flops_penalty: float = 0.0  # the reward's latency term (core.search.reward): 0 leaves it out
    evaluation: dict = field(default_factory=dict)
    deploy: dict = field(default_factory=dict)
    tuning_root: str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.samples is None and self.minutes is None:
            raise SearchError("give a number of candidates or a time limit in minutes")
        for name, low in (("in_flight", 1), ("samples", 1), ("test_seeds", 0), ("seed_cap", 0)):
            _whole(self, name, low)
        if self.seed_cap and self.test_seeds and not 2 <= self.test_seeds <= self.seed_cap:
            raise SearchError(
                f"with a seed cap, test_seeds are the seed rule's first look: between 2 and seed_cap "
                f"({self.seed_cap}), got {self.test_seeds} (seed_cap 0 tests a fixed count)"
            )
        for name in ("fisher_threshold", "margin", "minutes", "flops_penalty"):
            _number(self, name, 0)
        try:
            _ = self.seed_rule
        except ValueError as e:  # the margin is no fraction the rule can judge by
            raise SearchError(str(e)) from None
        _ = self._task  # EvaluationError names a bad proxy-task setting
        if self.tune:
            _ = self.deployment  # DeployError names a bad deployment setting

    @classmethod
    def of(cls, template: dict, backbone: str, seed: int, proxy: dict, deploy: dict, **run) -> DiscoveryConfig:
        """A run's settings from the template, the proxy task (`proxy`: the other EvalSettings
        and TrainConfig fields, such as dataset, width, epochs, limit; None leaves one out), the
        deployment (`deploy`: DeploySettings' fields but the backbone and seed, which both sides
        share) and the rest (`run`: strategy, budget_flops, minutes, ...)."""
        evaluation = {"backbone": backbone, "seed": seed, **{k: v for k, v in proxy.items() if v is not None}}
        deployment = DeploySettings(backbone=backbone, seed=seed, **deploy).to_payload()
        return cls(template=template, seed=seed, evaluation=evaluation, deploy=deployment, **run)

    @classmethod
    def stored(cls, config: dict) -> DiscoveryConfig:
        """A run's settings as the store keeps them (core.store.searches): one kept before the
        seed cap existed tested a fixed count, and reads so (with the key it was kept under)."""
        return cls.from_dict({"seed_cap": 0, **config})

    @property
    def key(self) -> str:
        """What identifies the run: everything but how long it runs and how wide, and the
        references, which select nothing (and the report's seeds and the FLOPs penalty when the
        defaults, and the seed cap when 0, so that runs from before them keep their key)."""
        unkeyed = ("minutes", "samples", "in_flight", "name", "references")
        settings = {k: v for k, v in self.to_dict().items() if k not in unkeyed}
        if self.test_seeds == SEEDS:
            del settings["test_seeds"]
        if not self.flops_penalty:
            del settings["flops_penalty"]
        if not self.seed_cap:
            del settings["seed_cap"]
        return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]

    @cached_property
    def _task(self) -> tuple[EvalSettings, TrainConfig]:
        return proxy_task(self.evaluation)

    @property
    def settings(self) -> EvalSettings:
        return self._task[0]

    @property
    def training(self) -> TrainConfig:
        return self._task[1]

    @cached_property
    def deployment(self) -> DeploySettings:
        return DeploySettings.from_payload(self.deploy)

    @property
    def seed_rule(self) -> SeedRule | None:
        """How the test stage adds seeds (core.train.sequential): the default rule's steps and
        error spending, looking first at test_seeds and at most at seed_cap, judged against the
        run's margin (None: a fixed count of test_seeds, or no test)."""
        if not self.seed_cap or not self.test_seeds:
            return None
        return replace(DEFAULT_RULE, margin=self.margin, first=self.test_seeds, cap=self.seed_cap)

    @property
    def report_seeds(self) -> tuple[int, ...]:
        """The seeds the test stage may train with (those after the run's seed): all the seed
        rule's up to its cap, else test_seeds of them."""
        rule = self.seed_rule
        return report_seeds(self.seed, rule.cap if rule else self.test_seeds)

    @property
    def label(self) -> str:
        """'mcts on conv2d (resnet18/w16, digits@16px)': the run's name unless it is given one."""
        template = self.template.get("name") or "template"
        return self.name or f"{self.strategy} on {template} ({self.settings.spec.label}, {self.settings.dataset_label})"
