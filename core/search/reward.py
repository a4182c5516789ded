"""Scores as MCTS rewards on a scale fixed for the whole search, and the discovery loop's reward
for each way a candidate can end.

UCT averages rewards over many visits, so a reward must mean the same thing when it is
told as later: rescaling by the lowest and highest scores so far would change the meaning
of every earlier statistic as they drift. Accuracy is already in [0, 1] and is used as it
is (clipped). Unbounded positive scores (Fisher Potential) go through s / (s + s0), where
s0 is the first positive score told and never changes: monotone, rank-free, 0.5 at the
first score, and a score a thousand times larger is near 1 without squashing the rest.

The discovery loop (core.search.discovery) knows more than a score: the original network's
accuracy, what the screen said, how training ended. It tells the strategy `outcome_reward`,
in [0, 1] and fixed once the original's accuracy is known:

- trained (in full, stopped early, or near chance): Syno's normalised reward, the accuracy's
  gain over chance as a share of the original's, clipped to [0, 1] and squared (Syno's reward
  power 2): 1 at the original's accuracy, 0 at chance, and a candidate halfway there earns a
  quarter, so the few near the original stand out from the many far below it;
- screened out: a hint, up to HINT, in proportion to its Fisher Potential as a share of what
  the screen asks (the threshold x the original's), so a subtree that nearly passes is told
  apart from one that scores nothing, and small: a candidate the screen rejects is predicted to
  train poorly, and earns about what a poorly trained one does;
- too slow: half the hint it earned at the screen (it passed, but no epoch finished in time;
  its subtree should be tried less than one that trains);
- diverged or failed: 0.

With a FLOPs penalty w (an option, 0 by default), every reward is multiplied by
max(0, 1 - w x the candidate's FLOPs as a share of the original's, network-wide): the
latency term, FLOPs standing in for time, so that at equal accuracy the cheaper subtree wins."""

from __future__ import annotations

import math

KINDS = ("bounded", "unbounded")
#: Syno's reward power (its `--kas-reward-power`, default 2)
POWER = 2
#: the most a candidate that was never trained can earn: what one trained a seventh of the way
#: from chance to the original earns ((1/7)^2 = 0.02), about the median trained candidate of the
#: 60-minute run (0.19 against the original's 0.967 with 10 classes: 0.011)
HINT = 0.02
#: how each outcome of the loop (core.store.searches' final stages) is rewarded
TRAINED = ("trained", "stopped early", "did not learn", "outside margin", "within margin")
HINTED = ("screened out", "too slow")
NOTHING = ("diverged", "failed")


class RewardScale:
    def __init__(self, kind: str = "bounded"):
        if kind not in KINDS:
            raise ValueError(f"reward scale must be one of {', '.join(KINDS)}, got {kind!r}")
        self.kind = kind
        self.reference: float | None = None  # s0, fixed by the first positive unbounded score

    def __call__(self, score: float) -> float:
        """The reward in [0, 1]; a score that is not finite (or not positive, unbounded) is 0."""
        if not math.isfinite(score):
            return 0.0
        if self.kind == "bounded":
            return min(max(score, 0.0), 1.0)
        if score <= 0:
            return 0.0
        if self.reference is None:
            self.reference = score
        return score / (score + self.reference)


def accuracy_reward(accuracy: float, original: float, chance: float) -> float:
    """Syno's normalised reward: the accuracy's gain over chance as a share of the original
    network's, clipped to [0, 1], to the power POWER."""
    span = original - chance
    if not math.isfinite(accuracy) or span <= 0:  # an original no better than chance: all or nothing
        return 1.0 if math.isfinite(accuracy) and accuracy >= original else 0.0
    return min(max((accuracy - chance) / span, 0.0), 1.0) ** POWER


def fisher_hint(ratio: float | None, threshold: float) -> float:
    """HINT x the Fisher Potential as a share of what the screen asks (ratio: the candidate's
    over the original's), capped at HINT; 0 without a finite positive score."""
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return 0.0
    return HINT * (min(ratio / threshold, 1.0) if threshold > 0 else 1.0)


def outcome_reward(
    outcome: str,
    *,
    accuracy: float | None = None,
    original: float | None = None,
    chance: float = 0.0,
    fisher_ratio: float | None = None,
    threshold: float = 1.0,
    flops_ratio: float | None = None,
    flops_penalty: float = 0.0,
) -> float:
    """The reward in [0, 1] for a candidate that ended as `outcome` (see the module's notes):
    `accuracy` (validation, at the stop) and the `original` network's, with `chance` (1 / classes),
    for a trained one; `fisher_ratio` and the screen's `threshold` for one screened out or too slow;
    `flops_ratio` (its FLOPs over the original's) and `flops_penalty` for the latency term."""
    if outcome in TRAINED:
        if accuracy is None or original is None:
            raise ValueError(f"a {outcome!r} candidate's reward needs its accuracy and the original's")
        reward = accuracy_reward(accuracy, original, chance)
    elif outcome in HINTED:
        reward = fisher_hint(fisher_ratio, threshold) * (0.5 if outcome == "too slow" else 1.0)
    elif outcome in NOTHING:
        reward = 0.0
    else:
        raise ValueError(f"no reward for outcome {outcome!r}; known: {', '.join(TRAINED + HINTED + NOTHING)}")
    if flops_penalty and flops_ratio is not None:
        reward *= max(0.0, 1.0 - flops_penalty * flops_ratio)
    return reward
