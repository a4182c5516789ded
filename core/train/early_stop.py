"""Canvas's early-stop rule for proxy training, and the best curve it compares against.

At epoch e of E (1-based) a candidate keeps training only if
    acc(e) >= lambda(e) * best(e),   lambda(e) = theta + (1 - theta) * e / E,
where best is the accuracy-per-epoch curve of the best finished run so far with the
same dataset, backbone and epoch budget: lenient early on, as strict as the best at
the end. Without a best curve every run goes the full E epochs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .errors import EvaluationError


def check_theta(theta: float) -> float:
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 0.0 <= theta <= 1.0:
        raise EvaluationError(f"the early-stop theta must be a number between 0 and 1, got {theta!r}")
    return float(theta)


def required_accuracy(epoch: int, epochs: int, best: Sequence[float], theta: float = 0.5) -> float:
    """lambda(e) * best(e): the accuracy a run must reach after `epoch` of `epochs` epochs."""
    lam = theta + (1.0 - theta) * epoch / epochs
    return lam * best[epoch - 1]


def keep_training(accuracy: float, epoch: int, epochs: int, best: Sequence[float] | None, theta: float = 0.5) -> bool:
    """False when the run falls below the rule; always True without a best curve."""
    if not best or len(best) < epoch:
        return True
    return accuracy >= required_accuracy(epoch, epochs, best, theta)


def best_curve(store, dataset: str, backbone: str, epochs: int) -> list[float] | None:
    """Accuracy per epoch of the stored run with the highest final accuracy among those that
    trained all `epochs` epochs on this dataset and backbone (labels as scores record them)."""
    rows = store.db.execute(
        "SELECT accuracy_per_epoch FROM scores WHERE dataset = ? AND backbone = ? AND epochs = ? "
        "AND accuracy IS NOT NULL ORDER BY accuracy DESC, id",
        [dataset, backbone, epochs],
    )
    for (text,) in rows:
        curve = json.loads(text) if text else []
        if len(curve) == epochs:
            return [float(a) for a in curve]
    return None
