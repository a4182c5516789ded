"""The smallest proxy task and training that still run every accuracy-side stage, shared by the
tests of accuracy jobs on local workers and on Ray."""

from __future__ import annotations

from core.train.settings import EvalSettings, TrainConfig

TINY = EvalSettings(backbone="resnet18", width=4, resolution=8, limit=200, fisher_batch=16)
SHORT = TrainConfig(epochs=1, max_batches=3, batch_size=16)
