"""The results table's row order with each row's sort key, so results that arrive later
are put in place (a binary search each) instead of sorting the whole store again.

The order is SQL's `ORDER BY key IS NULL, key DIR, id DIR`: rows with a key first,
sorted by key and then by id, in one direction; rows without one last, by id.
Numeric keys are floats, text keys Python strings (compared like SQLite's BINARY)."""

from __future__ import annotations

import numpy as np

from .arrays import isin


def key_array(values: list, numeric: bool) -> np.ndarray:
    return np.array(values, dtype=float) if numeric else np.array(values, dtype=object)


class TableOrder:
    def __init__(self, ids, keys: list, numeric: bool, descending: bool):
        """`ids` and `keys` in table order (as the SQL above returns them)."""
        self.ids = np.asarray(ids, dtype=np.int64)
        self.numeric, self.descending = numeric, descending
        present = [k for k in keys if k is not None]
        self.head = key_array(present, numeric)  # keys of the first len(head) rows, in table order

    def __len__(self) -> int:
        return len(self.ids)

    def _copy(self, ids: np.ndarray, head: np.ndarray) -> TableOrder:
        order = TableOrder([], [], self.numeric, self.descending)
        order.ids, order.head = ids, head
        return order

    def inserted(self, ids, keys: list) -> tuple[TableOrder, np.ndarray]:
        """This order with more rows put in their places (rows already present are skipped),
        and the new rows' indices in it (ascending)."""
        ids = np.asarray(ids, dtype=np.int64)
        fresh = ~isin(ids, self.ids)
        rows = sorted(
            ((int(i), k) for i, k, f in zip(ids, keys, fresh) if f), key=lambda r: (r[1] is None, *self._sort_key(*r))
        )
        if not rows:
            return self, np.empty(0, np.intp)
        at = [self._position(i, k) for i, k in rows]  # in the current rows; non-decreasing
        keyed = [(p, k) for p, (_, k) in zip(at, rows) if k is not None]
        head = (
            np.insert(self.head, [p for p, _ in keyed], key_array([k for _, k in keyed], self.numeric))
            if keyed
            else self.head
        )
        final = np.asarray(at, dtype=np.intp) + np.arange(len(at))
        return self._copy(np.insert(self.ids, at, [i for i, _ in rows]), head), final

    def removed(self, ids) -> TableOrder:
        keep = ~isin(self.ids, np.asarray(ids, dtype=np.int64))
        return self._copy(self.ids[keep], self.head[keep[: len(self.head)]])

    def _sort_key(self, result_id: int, key) -> tuple:
        """Sorts rows among themselves in table order (nulls are handled by the caller)."""
        sign = -1 if self.descending else 1
        if key is None:
            return (sign * result_id,)
        return (_Reversed(key), -result_id) if self.descending else (key, result_id)

    def _position(self, result_id: int, key) -> int:
        """Index in the current rows before which the row belongs."""
        n = len(self.head)
        if key is None:
            tail = self.ids[n:]
            ascending = tail[::-1] if self.descending else tail
            p = int(np.searchsorted(ascending, result_id))
            return n + (len(tail) - p if self.descending else p)
        keys, ids = (self.head[::-1], self.ids[:n][::-1]) if self.descending else (self.head, self.ids[:n])
        probe = float(key) if self.numeric else key
        lo, hi = int(np.searchsorted(keys, probe, "left")), int(np.searchsorted(keys, probe, "right"))
        p = lo + int(np.searchsorted(ids[lo:hi], result_id))
        return n - p if self.descending else p


class _Reversed:
    """Wraps a key so that sorting ascending orders it descending (text cannot be negated)."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key

    def __eq__(self, other) -> bool:
        return self.key == other.key
