"""Every result as numpy columns (id, origin and the plot-axis columns), so the plot can
redraw and pick points without going back to SQLite.

A result is a row of the store's results view: a measurement, or an operator not
measured yet (found by a search, maybe scored). Its id here is one integer: the
measurement id, or minus the operator id. A reader reads everything once,
then only new measurements and the changes among the unmeasured operators; an
operator's unmeasured row dies when its first measurement arrives.

A reader thread builds FrameChunks; the GUI thread owns the ResultsFrame. The columns
are the caller's (the plot's axes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .query import RESULT_ID, fetch


@dataclass(frozen=True)
class FrameChunk:
    ids: np.ndarray  # int64 result ids
    origin_names: list[str]  # the distinct origins of this chunk
    origin_index: np.ndarray  # per row, an index into origin_names
    values: dict[str, np.ndarray]  # column -> float64, NaN where the store has NULL

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray) -> FrameChunk:
        return FrameChunk(
            self.ids[rows], self.origin_names, self.origin_index[rows], {k: v[rows] for k, v in self.values.items()}
        )

    @staticmethod
    def empty(columns: Sequence[str]) -> FrameChunk:
        return FrameChunk(np.empty(0, np.int64), [], np.empty(0, np.intp), {k: np.empty(0) for k in columns})


def read_chunk(db, keys: Sequence[str], where: str = "", args=()) -> FrameChunk:
    """Results matching `where` (all if empty) with the numeric columns `keys`, through
    `db` (a sqlite_utils Database)."""
    names: dict[str, int] = {}
    ids: list[np.ndarray] = []
    index: list[np.ndarray] = []
    columns: list[list[np.ndarray]] = [[] for _ in keys]
    select = f"SELECT {RESULT_ID}, origin, {', '.join(keys)} FROM results"
    for rows in fetch(db, f"{select}{' WHERE ' + where if where else ''} ORDER BY 1", args):
        part = list(zip(*rows))
        ids.append(np.array(part[0], dtype=np.int64))
        index.append(np.array([names.setdefault(o or "", len(names)) for o in part[1]], dtype=np.intp))
        for column, values in zip(columns, part[2:]):
            column.append(_floats(values))
    if not ids:
        return FrameChunk.empty(keys)
    return FrameChunk(
        np.concatenate(ids),
        list(names),
        np.concatenate(index),
        {key: np.concatenate(column) for key, column in zip(keys, columns)},
    )


def _floats(values: Sequence) -> np.ndarray:
    """A column as float64, NaN where the store has NULL or, changed outside Tessera, text."""
    try:
        return np.array(values, dtype=float)
    except (TypeError, ValueError):
        return np.array([v if isinstance(v, (int, float)) else None for v in values], dtype=float)


def concat(chunks: list[FrameChunk], keys: Sequence[str]) -> FrameChunk:
    chunks = [c for c in chunks if len(c)]
    if len(chunks) <= 1:
        return chunks[0] if chunks else FrameChunk.empty(keys)
    names = sorted({n for c in chunks for n in c.origin_names})
    index = np.concatenate([np.array([names.index(n) for n in c.origin_names])[c.origin_index] for c in chunks])
    return FrameChunk(
        np.concatenate([c.ids for c in chunks]),
        names,
        index,
        {k: np.concatenate([c.values[k] for c in chunks]) for k in keys},
    )


class ResultsFrame:
    """Column arrays aligned by row, in arrival order. Rows are never moved: a result that
    goes away is marked dead until the next full reload."""

    def __init__(self, keys: Sequence[str]):
        self.keys = tuple(keys)  # the numeric columns held
        self._clear()

    def _clear(self) -> None:
        self.ids = np.empty(0, np.int64)
        self.alive = np.empty(0, bool)
        self.origin_codes = np.empty(0, np.int16)
        self.origins: list[str] = []  # code -> origin, in order of first appearance
        self.values: dict[str, np.ndarray] = {k: np.empty(0) for k in self.keys}
        self._lookup: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def count(self) -> int:
        """Live results."""
        return int(self.alive.sum())

    def replace(self, chunk: FrameChunk) -> None:
        self._clear()
        self.append(chunk)

    def append(self, chunk: FrameChunk) -> slice:
        """Add rows; returns the slice of the new rows."""
        start = len(self.ids)
        if len(chunk):
            codes = np.array([self._code(o) for o in chunk.origin_names], np.int16)[chunk.origin_index]
            self.ids = np.concatenate([self.ids, chunk.ids])
            self.alive = np.concatenate([self.alive, np.ones(len(chunk), bool)])
            self.origin_codes = np.concatenate([self.origin_codes, codes])
            for key in self.keys:
                self.values[key] = np.concatenate([self.values[key], chunk.values[key]])
            self._lookup = None
        return slice(start, len(self.ids))

    def kill(self, ids) -> np.ndarray:
        """Mark results gone; returns the rows that were alive."""
        rows = self.positions(ids)
        self.alive[rows] = False
        return rows

    def positions(self, ids) -> np.ndarray:
        """Rows of the live results among `ids`."""
        if self._lookup is None:
            order = np.argsort(self.ids, kind="stable")
            self._lookup = (self.ids[order], order)
        sorted_ids, order = self._lookup
        ids = np.asarray(ids, dtype=np.int64).ravel()
        at = np.searchsorted(sorted_ids, ids)
        found = at < len(sorted_ids)
        found[found] = sorted_ids[at[found]] == ids[found]
        rows = order[at[found]]
        return rows[self.alive[rows]]

    def origin_counts(self) -> dict[str, int]:
        counts = np.bincount(self.origin_codes[self.alive], minlength=len(self.origins))
        return {origin: int(n) for origin, n in zip(self.origins, counts) if n}

    def _code(self, origin: str) -> int:
        if origin not in self.origins:
            self.origins.append(origin)
        return self.origins.index(origin)
