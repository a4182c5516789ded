"""The results the user picked, shared by the plot, the table and the side panels, so
selecting in one highlights in the others. The `source` of a change lets a view ignore
the echo of its own selection."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, Signal

from core.store.arrays import isin


class ResultSelection(QObject):
    changed = Signal(object)  # source of the change (a view, or None)
    currentChanged = Signal(object)  # result id or None: the result the details describe

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ids = np.empty(0, np.int64)  # sorted
        self.current: int | None = None

    def set(self, ids, source=None, current: int | None = None) -> None:
        ids = np.unique(np.asarray(ids, dtype=np.int64))
        if current is None and len(ids):
            current = self.current if self.current in ids else int(ids[-1])
        if not np.array_equal(ids, self.ids):
            self.ids = ids
            self.changed.emit(source)
        self.set_current(current)

    def set_current(self, result_id: int | None) -> None:
        if result_id != self.current:
            self.current = result_id
            self.currentChanged.emit(result_id)

    def clear(self, source=None) -> None:
        self.set([], source)

    def discard(self, ids) -> None:
        """Forget deleted results."""
        remaining = self.ids[~isin(self.ids, np.asarray(ids, dtype=np.int64))]
        current = self.current if self.current in remaining else None
        self.set(remaining, None, current)

    def __len__(self) -> int:
        return len(self.ids)
