"""How many seeds a verdict needs: add them a few at a time until the paired interval decides.

A fixed count is either too few for an operator close to the margin (its interval straddles
-margin: undecided) or too many for one far from it. So the rule looks at `first` seeds, then
every `step` more, up to `cap`, and stops as soon as the interval of the paired differences
(core.train.paired) lies entirely above -margin (WITHIN) or entirely below it (WORSE).

Looking again after each step gives a candidate more chances to pass by luck: at 95% per look,
looks every 3 seeds up to 24 pass a 1-point-worse candidate about 8% of the time, not 2.5%. So
the error is spent over the looks: each look's interval leaves `alpha` out on each side (a
two-sided 1 - 2 x alpha interval), and by Bonferroni's inequality the chance of any false pass
over the whole run is at most looks x alpha. The default (3, 5, ..., 15 seeds: 7 looks at 0.7%)
keeps it under 5% and, in a simulation on the spread measured for an equal operator on
digits-shifted, still found 88% of equal operators within. tests/core/test_sequential.py checks
both by simulation. Imports no torch."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .paired import MARGIN, PairedDifference, margin_words, points, signed_points, t_quantile

WITHIN, WORSE, UNDECIDED = "within", "worse", "undecided"


@dataclass(frozen=True)
class Decision:
    """What the rule says after `seeds` paired differences."""

    outcome: str  # WITHIN (interval entirely above -margin), WORSE (entirely below), UNDECIDED
    finished: bool  # stop adding seeds: the interval decided, or the cap is reached
    seeds: int
    interval: tuple[float, float] | None  # the look's interval of the mean difference (None: under 2 seeds)
    next_seeds: int  # the seed count wanted at the next look (== seeds when finished)
    margin: float = MARGIN
    confidence: float = 0.95  # of the look's interval (1 - 2 x alpha)
    cap: int = 0

    def words(self) -> str:
        """'within 1 point after 9 seeds: the 98.6% interval of the difference, -0.4 to +0.9
        points, lies above -1; stopped: the interval decided'."""
        limit = margin_words(self.margin)
        said = {WITHIN: f"within {limit}", WORSE: f"more than {limit} worse", UNDECIDED: f"undecided at {limit}"}
        head = f"{said[self.outcome]} after {self.seeds} seed{'' if self.seeds == 1 else 's'}"
        if self.interval is None:
            span = f"no interval yet (it needs 2 seeds, has {self.seeds})"
        else:
            low, high = self.interval
            where = {WITHIN: "lies above", WORSE: "lies below", UNDECIDED: "reaches across"}[self.outcome]
            span = (
                f"the {self.confidence:.1%} interval of the difference, {signed_points(low)} to {signed_points(high)} "
                f"points, {where} -{points(self.margin)}"
            )
        if self.outcome != UNDECIDED:
            why = "stopped: the interval decided"
        elif self.finished:
            why = f"stopped: the cap of {self.cap} seeds, undecided"
        else:
            why = f"next: {self.next_seeds} seeds"
        return f"{head}: {span}; {why}"


@dataclass(frozen=True)
class SeedRule:
    """Look at `first` seeds, then every `step` more up to `cap`; each look's interval leaves
    `alpha` out on each side. WITHIN needs the interval entirely above -margin."""

    margin: float = MARGIN
    first: int = 3
    step: int = 2
    cap: int = 15
    alpha: float = 0.007

    def __post_init__(self):
        for name, low in (("first", 2), ("step", 1), ("cap", self.first)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"seed rule: {name} must be a whole number >= {low}, got {value!r}")
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"seed rule: alpha must be between 0 and 0.5, got {self.alpha!r}")
        if not 0 <= self.margin <= 1:
            raise ValueError(f"seed rule: the margin must be a fraction between 0 and 1, got {self.margin!r}")

    @property
    def confidence(self) -> float:
        """Of each look's two-sided interval."""
        return 1 - 2 * self.alpha

    def looks(self) -> tuple[int, ...]:
        """The seed counts at which the rule looks: first, first + step, ..., and the cap."""
        counts = list(range(self.first, self.cap + 1, self.step))
        return tuple(counts if counts[-1] == self.cap else [*counts, self.cap])

    def decide(self, differences: Sequence[float]) -> Decision:
        """The verdict on these paired differences (ours minus the original's, seed by seed, as
        fractions) at this many seeds, and how many seeds to have at the next look."""
        n = len(differences)
        interval = PairedDifference(tuple(differences), self.confidence).interval
        outcome = UNDECIDED
        if interval is not None and n >= self.first:
            outcome = WITHIN if interval[0] > -self.margin else WORSE if interval[1] < -self.margin else UNDECIDED
        finished = outcome != UNDECIDED or n >= self.cap
        later = [k for k in self.looks() if k > n]
        next_seeds = n if finished or not later else later[0]
        return Decision(outcome, finished, n, interval, next_seeds, self.margin, self.confidence, self.cap)

    def run(self, differences: Sequence[float]) -> Decision:
        """The rule looking at these differences look by look, as evaluate runs it: the first
        seeds', then more until it finishes or they run out."""
        decision = self.decide(differences[: self.first])
        while not decision.finished and decision.next_seeds <= len(differences):
            decision = self.decide(differences[: decision.next_seeds])
        return decision


def detectable_difference(spread: float, seeds: int, confidence: float = 0.95, power: float = 0.8) -> float:
    """The smallest distance between a candidate's true mean difference and the margin that a
    fixed run of `seeds` seeds, judged by a two-sided `confidence` interval, detects `power` of
    the time, given the differences' standard deviation `spread`: (t(1 - a/2) + t(power)) x
    spread / sqrt(seeds), with n - 1 degrees of freedom (at least 2 seeds)."""
    if seeds < 2:
        raise ValueError(f"a detectable difference needs at least 2 seeds, got {seeds}")
    from scipy import stats

    t = t_quantile(confidence, seeds) + stats.t.ppf(power, seeds - 1)
    return float(t) * spread / math.sqrt(seeds)


#: one simulated candidate's paired differences for `count` seeds, drawn with `rng`
Draw = Callable[[random.Random, int], list[float]]


@dataclass(frozen=True)
class Simulated:
    """How often a rule reached each outcome over simulated candidates, and its mean seed count."""

    runs: int
    within: float
    worse: float
    undecided: float
    mean_seeds: float


def simulate(rule: SeedRule, draw: Draw, runs: int, seed: int = 0) -> Simulated:
    """Run `rule` on `runs` simulated candidates, each look by look as evaluate runs it: the
    differences of its first seeds, then more until the rule stops. Seeded: the same figures
    every time."""
    rng = random.Random(seed)
    outcomes = {WITHIN: 0, WORSE: 0, UNDECIDED: 0}
    seeds = 0
    for _ in range(runs):
        decision = rule.run(draw(rng, rule.cap))
        outcomes[decision.outcome] += 1
        seeds += decision.seeds
    return Simulated(runs, outcomes[WITHIN] / runs, outcomes[WORSE] / runs, outcomes[UNDECIDED] / runs, seeds / runs)


def normal(mean: float, spread: float) -> Draw:
    """Differences drawn from a normal distribution of this mean and standard deviation."""
    return lambda rng, count: [rng.gauss(mean, spread) for _ in range(count)]


def resampled(measured: Sequence[float]) -> Draw:
    """Differences drawn with replacement from measured ones (a bootstrap)."""
    values = list(measured)
    return lambda rng, count: rng.choices(values, k=count)


#: the rule `tessera evaluate` and the discovery loop use unless told otherwise
DEFAULT_RULE = SeedRule()
