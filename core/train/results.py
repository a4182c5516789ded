"""The results of the accuracy side's job kinds, as their handlers (core.train.handlers) return
them and the store keeps them on the job row: each carries the store's score of the operator
under "score" (recorded as a score, core.train.kinds) and what else was found. Reading one
refuses an unknown or missing field, or a value of the wrong type, with an InvalidResult naming
the field (core.jobs.contract). Importing this imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..data.replacement import Replacement
from ..jobs.contract import Result
from ..networks.results import EndToEnd
from ..store.score import Score
from ..typed_json import refuse

#: how a training run ended (core.train.proxy): in full, stopped by the early-stop rule, loss or
#: activations no longer finite, a final accuracy near chance, or an epoch projected to take
#: longer than the run's limit (TrainConfig.max_epoch_seconds)
OUTCOMES = ("trained", "stopped early", "diverged", "did not learn", "too slow")


@dataclass(frozen=True)
class FisherResult(Result):
    """Fisher Potential at initialisation of the network with the operator, against the
    original network's over the same (replaced) layers."""

    kind = "fisher"
    score: Score
    fisher_potential: float
    fisher_original: float
    fisher_passes: bool  # not below the original's (NAS-PTE's filter)
    fisher_layers: dict[str, float]  # per replaced layer
    fisher_layers_original: dict[str, float]
    replacement: Replacement

    @property
    def fisher_ratio(self) -> float:
        """The candidate's Fisher Potential over the original's (infinite when the original's is 0)."""
        return self.fisher_potential / self.fisher_original if self.fisher_original else float("inf")


@dataclass(frozen=True)
class TrainResult(FisherResult):
    """Fisher Potential at initialisation, then proxy training: the accuracy after every epoch,
    and how the training ended (OUTCOMES; `reason` says why when not 'trained')."""

    kind = "train"
    accuracy_per_epoch: tuple[float, ...]
    seconds_per_epoch: tuple[float, ...]
    reason: str
    outcome: str
    epochs_planned: int
    classes: int  # of the dataset

    def __post_init__(self):
        super().__post_init__()
        if self.outcome not in OUTCOMES:
            refuse(self, "outcome", f"one of {', '.join(OUTCOMES)}", self.outcome)


@dataclass(frozen=True)
class E2EResult(EndToEnd, Result):
    """The network with the operator against the original, both tuned (core.networks.results),
    and the score recording it."""

    kind = "e2e"
    score: Score

    @classmethod
    def of(cls, run: EndToEnd, dataset: str, backbone: str) -> E2EResult:
        """The result of timing `run`, its score recorded under the accuracy side's dataset
        and backbone (so it joins the operator's accuracy in the results)."""
        score = Score(
            dataset,
            backbone,
            e2e_latency_ms=run.latency_ms,
            e2e_baseline_ms=run.baseline_latency_ms,
            e2e_speedup=run.baseline_latency_ms / run.latency_ms,
            e2e_tuned=run.tuned,
            deploy=run.deploy,
            e2e_torch_ms=run.torch_latency_ms,
            e2e_torch_baseline_ms=run.torch_baseline_ms,
        )
        return cls(**{f.name: getattr(run, f.name) for f in fields(EndToEnd)}, score=score)
