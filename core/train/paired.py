"""Is a network as accurate as another? Paired over seeds: each seed trains both networks (the
same data split and example order; core.train.seeds), so the per-seed differences cancel
what the seed does to both, and their mean gets a Student-t interval (as scipy.stats.ttest_rel's:
mean difference +- t(0.975, n - 1) x its standard error, for 95%). A candidate is "within the
margin" when the whole interval lies above -margin: its lower end is above it. Too few seeds
give a wide interval and so no claim, which is the point: one seed cannot tell. Imports no torch."""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
SEEDS = 3  # seeds a reported accuracy trains with, by default
MARGIN = 0.01  # accuracy below the original's still "within the margin", by default (Syno: < 1 point)


def report_seeds(seed: int, count: int) -> tuple[int, ...]:
    """The seeds a reported accuracy trains with: the `count` after the selection's own `seed`,
    so the run that selected a candidate (and may have been lucky) is not among them."""
    return tuple(range(seed + 1, seed + 1 + count))


@dataclass(frozen=True)
class PairedDifference:
    """Accuracy of `ours` minus `theirs` (fractions, seed by seed), its mean and the interval."""

    differences: tuple[float, ...]
    confidence: float = CONFIDENCE

    @property
    def n(self) -> int:
        return len(self.differences)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.differences)

    @property
    def interval(self) -> tuple[float, float] | None:
        """The t-interval of the mean difference; None with fewer than 2 seeds."""
        if self.n < 2:
            return None
        mean = self.mean
        half = t_quantile(self.confidence, self.n) * self.spread / math.sqrt(self.n)
        return mean - half, mean + half

    @property
    def spread(self) -> float:
        """The differences' standard deviation (n - 1 in the denominator); at least 2 seeds."""
        mean = self.mean
        return math.sqrt(math.fsum((d - mean) ** 2 for d in self.differences) / (self.n - 1))

    def within(self, margin: float) -> bool | None:
        """Whether the interval lies above -margin (None: too few seeds to say)."""
        return within(self.interval, margin)

    def verdict(self, margin: float) -> str:
        return verdict(self.interval, margin, self.confidence)


@functools.cache
def t_quantile(confidence: float, n: int) -> float:
    """Student's t quantile of a two-sided `confidence` interval of a mean of n values (cached:
    the seed rule's simulations ask for the same few thousands of times)."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence / 2, n - 1))


def within(interval: tuple[float, float] | None, margin: float) -> bool | None:
    """The rule: the interval's lower end above -margin (None: no interval, too few seeds)."""
    return None if interval is None else interval[0] > -margin


def verdict(interval: tuple[float, float] | None, margin: float, confidence: float = CONFIDENCE) -> str:
    """The rule and its outcome in words, e.g. 'within 1 point: the 95% interval of the
    difference, -0.4 to +0.9 points, lies above -1'."""
    limit = margin_words(margin)
    if interval is None:
        return f"cannot tell whether within {limit}: a {confidence:.0%} interval needs at least 2 seeds"
    span = f"the {confidence:.0%} interval of the difference, {signed_points(interval[0])} to {signed_points(interval[1])} points"
    if within(interval, margin):
        return f"within {limit}: {span}, lies above -{points(margin)}"
    return f"not shown within {limit}: {span}, reaches below -{points(margin)}"


def paired_difference(
    ours: Sequence[float], theirs: Sequence[float], confidence: float = CONFIDENCE
) -> PairedDifference:
    """The seed-by-seed difference of two accuracy lists trained with the same seeds, in order."""
    if len(ours) != len(theirs) or not ours:
        raise ValueError(f"paired accuracies need the same seeds on both sides, got {len(ours)} and {len(theirs)}")
    return PairedDifference(tuple(a - b for a, b in zip(ours, theirs)), confidence)


def mean_std(values: Sequence[float]) -> str:
    """'0.912 +- 0.004 (3 seeds)', or one value as it is."""
    if len(values) < 2:
        return f"{values[0]:.3f} (1 seed)" if values else "no accuracy"
    return f"{statistics.fmean(values):.3f} +- {statistics.stdev(values):.3f} ({len(values)} seeds)"


def margin_words(margin: float) -> str:
    """'1 point', '0.5 points'."""
    return f"{points(margin)} point{'' if points(margin) == '1' else 's'}"


def points(fraction: float) -> str:
    return f"{100 * fraction:.2g}"


def signed_points(fraction: float) -> str:
    return f"{100 * fraction:+.1f}"
