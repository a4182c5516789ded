"""The smallest proxy task and training that still run every accuracy-side stage, shared by the
tests of accuracy jobs on local workers, on Ray and from `tessera evaluate`; and the score rows
those jobs leave in a store."""

from __future__ import annotations

from core.store import Store
from core.train.settings import EvalSettings, TrainConfig

TINY = EvalSettings(backbone="resnet18", width=4, resolution=8, limit=200, fisher_batch=16)
SHORT = TrainConfig(epochs=1, max_batches=3, batch_size=16)


def scores(store: Store) -> list[dict]:
    return list(store.db["scores"].rows_where(order_by="id"))
