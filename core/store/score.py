"""One score of an operator on the accuracy side: what Fisher Potential, proxy training and
tuned end-to-end timing find (the "score" of a fisher, train or e2e job's result), and what
the store records of it (core.store.records reads the row it keeps from it).

`dataset` and `backbone` say what the score was measured on; every other field defaults to
"not known", so a Fisher Potential carries no accuracy and a training no latency. Reading
one from JSON refuses an unknown or missing field, or a value of the wrong type, with an
InvalidResult naming the field (core.typed_json)."""

from __future__ import annotations

from dataclasses import dataclass

from ..typed_json import JsonRecord, refuse
from .errors import InvalidResult


@dataclass(frozen=True)
class Score(JsonRecord):
    what = "the score"
    error = InvalidResult

    dataset: str  # the dataset's name
    backbone: str  # the backbone network's label, e.g. 'resnet18/w16@16px'
    epochs: int = 0  # training epochs (0: not trained)
    accuracy: float | None = None  # final validation accuracy (None: not trained, or diverged)
    accuracy_per_epoch: tuple[float, ...] = ()  # after every epoch, in order
    fisher_potential: float | None = None  # at initialisation

    # tuned end to end: the network with the operator against the original, same run
    e2e_latency_ms: float | None = None  # whole-network latency with the operator, TVM-compiled
    e2e_baseline_ms: float | None = None  # the original network's
    e2e_speedup: float | None = None  # e2e_baseline_ms / e2e_latency_ms (derived when absent)
    e2e_tuned: bool | None = None  # both networks ran with tuned kernels (the same budget)
    deploy: str | None = None  # the deployment size they were timed at, e.g. 'resnet18/w64@32px'
    e2e_torch_ms: float | None = None  # PyTorch's eager latency of the network with the operator
    e2e_torch_baseline_ms: float | None = None  # and of the original

    # held-out test accuracy: trained again over seeds, tested on the test split (core.train.seeds)
    test_seeds: int | None = None  # how many seeds were trained (None: no test score)
    test_accuracy: float | None = None  # mean over the seeds that did not diverge
    test_accuracy_std: float | None = None  # their sample standard deviation (None with 1)
    test_difference: float | None = None  # mean seed-by-seed difference from the original's
    test_difference_low: float | None = None  # its 95% interval (core.train.paired; None with 1 seed)
    test_difference_high: float | None = None
    test_margin: float | None = None  # the margin the difference was judged against

    def __post_init__(self):
        super().__post_init__()
        for name in ("dataset", "backbone"):
            if not getattr(self, name):
                refuse(self, name, "a non-empty string", getattr(self, name))
        if self.epochs < 0:
            refuse(self, "epochs", "a whole number >= 0", self.epochs)
        if self.test_seeds is not None and self.test_seeds < 1:
            refuse(self, "test_seeds", "a whole number >= 1", self.test_seeds)
        for name in ("e2e_latency_ms", "e2e_baseline_ms", "e2e_torch_ms", "e2e_torch_baseline_ms"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                refuse(self, name, "a positive number", value)
