"""Canvas's early-stop rule for proxy training, and the best curve it compares against.

At epoch e of E (1-based) a candidate keeps training only if
    shown(e) >= lambda(e) * best(e),   lambda(e) = theta + (1 - theta) * e / E,
where shown(e) is the highest accuracy the run has reached by epoch e, and best(e) the same of
the accuracy-per-epoch curve of the best finished run so far with the same dataset, backbone
and epoch budget: lenient early on, as strict as the best at the end. Without a best curve every
run goes the full E epochs.

Canvas compares the accuracy of epoch e itself. On the default task's 600 validation images,
with the learning rate still high, one epoch of a network known to learn can fall far and
recover: shift_conv read 0.787 then 0.468 then 0.833 (seed 1), and the rule stopped it at epoch
5 against the original's curve. What a run has shown it can reach does not vanish with one
noisy epoch, so the rule reads the highest so far. And the first epoch, the learning rate at its
highest, says little of how far a run will get: shift_conv read 0.333 after it (seed 2, under
0.55 x the original's 0.753) and ended at 0.867, above the original; after the first epoch
the bar is at most `floor` (the proxy passes 1.5 x chance): only a run that learned nothing stops
(tests/core/test_train_early_stop.py replays recorded curves; bench_discovery's early-stop
section measures the false-stop rate).
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
    """lambda(e) * best(e): the accuracy a run must have reached by `epoch` of `epochs` epochs
    (best(e): the best curve's highest by then)."""
    lam = theta + (1.0 - theta) * epoch / epochs
    return lam * max(best[:epoch])


def keep_training(
    curve: Sequence[float], epochs: int, best: Sequence[float] | None, theta: float = 0.5, floor: float = 0.0
) -> bool:
    """False when a run whose accuracy per epoch so far is `curve` falls below the rule: its
    highest under the required, which after the first epoch is at most `floor`; always True
    without a best curve."""
    epoch = len(curve)
    if not best or len(best) < epoch:
        return True
    required = required_accuracy(epoch, epochs, best, theta)
    return max(curve) >= (min(required, floor) if epoch == 1 else required)


def stop_epoch(
    curve: Sequence[float], epochs: int, best: Sequence[float] | None, theta: float = 0.5, floor: float = 0.0
) -> int | None:
    """The epoch after which the rule stops a run whose accuracy per epoch is `curve`, or None
    when it runs to the end: a recorded curve replayed, to see what the rule costs a network
    known to learn (the last epoch is never a stop)."""
    for epoch in range(1, min(len(curve), epochs - 1) + 1):
        if not keep_training(curve[:epoch], epochs, best, theta, floor):
            return epoch
    return None


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
