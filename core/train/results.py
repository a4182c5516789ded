"""The results of the accuracy side's job kinds, as their handlers (core.train.handlers) return
them and the store keeps them on the job row: each carries the store's score of the operator
under "score" (recorded as a score, core.train.kinds) and what else was found. Reading one
refuses an unknown or missing field, or a value of the wrong type, with an InvalidResult naming
the field (core.jobs.contract). Importing this imports neither torch nor TVM."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, fields, replace

from ..data.conv_fit import Replacement
from ..jobs.contract import Result
from ..networks.results import EndToEnd
from ..store.score import Score
from ..typed_json import refuse
from .paired import PairedDifference, mean_std, paired_difference
from .sequential import Decision, SeedRule, detectable_difference

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
class NetworkFlops:
    """A network's FLOPs at one size (forward, batch 1, 2 per multiply-add; core.train.flops),
    the original's, and the original narrowed to about the same: its width multiplier and FLOPs
    (the reference a speedup that only reflects fewer FLOPs is held against)."""

    flops: int
    original: int
    scale: float
    matched: int


@dataclass(frozen=True)
class SeedRun:
    """One seed's training for a reported accuracy (core.train.seeds): test accuracy (None when
    it diverged), the last validation accuracy, how it ended (OUTCOMES) and how long it took."""

    seed: int
    accuracy: float | None
    val_accuracy: float | None
    outcome: str
    seconds: float


@dataclass(frozen=True)
class HeldOutResult(Result):
    """Test accuracy of the network over seeds, and the original network's with the same seeds
    (None when not compared), judged against `margin` by the paired interval (core.train.paired)."""

    kind = "test"
    score: Score
    runs: tuple[SeedRun, ...]
    original: tuple[float | None, ...] | None
    margin: float
    epochs: int
    flops: NetworkFlops | None = None  # of the network trained, against the original's (None: not counted)
    rule: SeedRule | None = None  # the seeds were added until it decided (None: a fixed count)

    @property
    def accuracies(self) -> list[float]:
        """Test accuracy of every seed that did not diverge."""
        return [r.accuracy for r in self.runs if r.accuracy is not None]

    @property
    def paired(self) -> PairedDifference | None:
        """Seed by seed against the original, over the seeds where neither diverged."""
        if self.original is None:
            return None
        pairs = [(r.accuracy, o) for r, o in zip(self.runs, self.original) if r.accuracy is not None and o is not None]
        return paired_difference([a for a, _ in pairs], [o for _, o in pairs]) if pairs else None

    @property
    def decision(self) -> Decision | None:
        """What the seed rule said at the last look (None: a fixed count, or not paired)."""
        paired = self.paired
        return None if self.rule is None or paired is None else self.rule.decide(paired.differences)

    def power(self) -> str | None:
        """A fixed count's resolution: the smallest difference from the margin it would detect 80%
        of the time, at the spread its own differences show (None under 2 seeds)."""
        paired = self.paired
        if paired is None or paired.n < 2:
            return None
        spread = paired.spread
        smallest = detectable_difference(spread, paired.n)
        return (
            f"smallest difference from the margin this run could detect (80% power, 95% interval): "
            f"{100 * smallest:.1f} points, at the {100 * spread:.2f}-point spread of its {paired.n} differences"
        )

    def judgement(self) -> list[str]:
        """The verdict in words: the seed rule's (how many seeds, why it stopped), or a fixed
        count's with the smallest difference it could detect. Paired results only."""
        paired, decision = self.paired, self.decision
        if paired is None:
            return ["not paired with the original: no verdict"]
        if decision is not None:
            return [f"seed rule: {decision.words()}"]
        power = self.power()
        return [paired.verdict(self.margin), *([power] if power else [])]

    def lines(self) -> list[str]:
        """The report in words: mean +- std, the paired difference with its interval and the
        verdict; with a seed rule how many seeds it took and why it stopped, else the run's power."""
        seeds = ", ".join(str(r.seed) for r in self.runs)
        lines = [f"test accuracy over seeds {seeds} ({self.epochs} epochs each): {mean_std(self.accuracies)}"]
        lines += [f"seed {r.seed}: {r.outcome}" for r in self.runs if r.accuracy is None]
        if self.original is not None:
            lines.append(f"the original's, same seeds: {mean_std([a for a in self.original if a is not None])}")
            paired = self.paired
            if paired is None:
                lines.append("no seed where both trained: no difference to report")
            else:
                said, *power = self.judgement()
                lines += [f"difference {100 * paired.mean:+.1f} points (seed by seed); {said}", *power]
        return lines

    @classmethod
    def of(
        cls,
        runs: list[SeedRun],
        original: list[float | None] | None,
        margin: float,
        epochs: int,
        dataset: str,
        backbone: str,
        flops: NetworkFlops | None = None,
        rule: SeedRule | None = None,
    ) -> HeldOutResult:
        """The result of `runs`, its score recorded under the dataset and backbone labels."""
        draft = cls(
            Score(dataset, backbone),
            tuple(runs),
            None if original is None else tuple(original),
            margin,
            epochs,
            flops,
            rule,
        )
        found, paired, decision = draft.accuracies, draft.paired, draft.decision
        interval = decision.interval if decision else paired.interval if paired else None
        score = Score(
            dataset,
            backbone,
            epochs=epochs,
            test_seeds=len(runs),
            test_accuracy=statistics.fmean(found) if found else None,
            test_accuracy_std=statistics.stdev(found) if len(found) > 1 else None,
            test_difference=paired.mean if paired else None,
            test_difference_low=interval[0] if interval else None,
            test_difference_high=interval[1] if interval else None,
            test_margin=margin if original is not None else None,
        )
        return replace(draft, score=score)


@dataclass(frozen=True)
class E2EResult(EndToEnd, Result):
    """The network with the operator against the original, both tuned (core.networks.results),
    and the score recording it."""

    kind = "e2e"
    score: Score
    flops: NetworkFlops | None = None  # both networks' at the deployment size (None: not counted)

    @classmethod
    def of(cls, run: EndToEnd, dataset: str, backbone: str, flops: NetworkFlops | None = None) -> E2EResult:
        """The result of timing `run`, its score recorded under the accuracy side's dataset
        and backbone (so it joins the operator's accuracy in the results)."""
        score = Score(
            dataset,
            backbone,
            e2e_latency_ms=run.latency_ms,
            e2e_baseline_ms=run.baseline_latency_ms,
            e2e_speedup=run.speedup or run.baseline_latency_ms / run.latency_ms,  # the paired rounds' median
            e2e_tuned=run.tuned,
            deploy=run.deploy,
            e2e_torch_ms=run.torch_latency_ms,
            e2e_torch_baseline_ms=run.torch_baseline_ms,
        )
        return cls(**{f.name: getattr(run, f.name) for f in fields(EndToEnd)}, score=score, flops=flops)
