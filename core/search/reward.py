"""Scores as MCTS rewards on a scale fixed for the whole search.

UCT averages rewards over many visits, so a reward must mean the same thing when it is
told as later: rescaling by the lowest and highest scores so far would change the meaning
of every earlier statistic as they drift. Accuracy is already in [0, 1] and is used as it
is (clipped). Unbounded positive scores (Fisher Potential) go through s / (s + s0), where
s0 is the first positive score told and never changes: monotone, rank-free, 0.5 at the
first score, and a score a thousand times larger is near 1 without squashing the rest."""

from __future__ import annotations

import math

KINDS = ("bounded", "unbounded")


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
