"""Every result as numpy columns (id, origin and the plot-axis columns), so the plot can
redraw and pick points without going back to SQLite.

A result is a row of the store's results view: a measurement, or an operator not
measured yet (found by a search, maybe scored). Its id here is one integer: the
measurement id, or minus the operator id. The reader thread reads everything once,
then only new measurements and the changes among the unmeasured operators; an
operator's unmeasured row dies when its first measurement arrives.

Qt-free: the reader thread builds FrameChunks, the GUI thread owns the ResultsFrame."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .columns import FRAME_COLUMNS

#: the result id of a results-view row, as SQL
RESULT_ID = "COALESCE(measurement_id, -operator_id)"
_SELECT = f"SELECT {RESULT_ID}, origin, {', '.join(FRAME_COLUMNS)} FROM results"
FETCH_ROWS = 2000  # rows per fetch in the reader thread ...
FETCH_PAUSE_S = 5e-4  # ... and a pause after each, so the GUI thread gets the GIL between them
IDS_PER_QUERY = 500


def fetch(db, sql: str, args=()) -> Iterator[list[tuple]]:
    """Rows in chunks. Building Python rows holds the GIL, and every Qt call in the GUI
    thread releases and retakes it; without the pauses a long read would make each of
    those calls wait up to the interpreter's switch interval (5 ms)."""
    cursor = db.execute(sql, list(args))
    while rows := cursor.fetchmany(FETCH_ROWS):
        yield rows
        time.sleep(FETCH_PAUSE_S)


def by_ids(ids) -> Iterator[tuple[str, list]]:
    """WHERE clauses (and arguments) that pick results by id from the results view, in
    parts. A list of parameters reaches the view's indexes; json_each(?) would not."""
    ids = [int(i) for i in ids]
    for clause, wanted in (
        ("measurement_id IN ({})", [i for i in ids if i > 0]),
        ("measurement_id IS NULL AND operator_id IN ({})", [-i for i in ids if i < 0]),
    ):
        for start in range(0, len(wanted), IDS_PER_QUERY):
            part = wanted[start : start + IDS_PER_QUERY]
            yield clause.format(", ".join("?" * len(part))), part


@dataclass(frozen=True)
class FrameChunk:
    ids: np.ndarray  # int64 result ids
    origin_names: list[str]  # the distinct origins of this chunk
    origin_index: np.ndarray  # per row, an index into origin_names
    values: dict[str, np.ndarray]  # FRAME_COLUMNS -> float64, NaN where the store has NULL

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray) -> FrameChunk:
        return FrameChunk(
            self.ids[rows], self.origin_names, self.origin_index[rows], {k: v[rows] for k, v in self.values.items()}
        )

    @staticmethod
    def empty() -> FrameChunk:
        return FrameChunk(np.empty(0, np.int64), [], np.empty(0, np.intp), {k: np.empty(0) for k in FRAME_COLUMNS})


def read_chunk(db, where: str = "", args=()) -> FrameChunk:
    """Results matching `where` (all if empty), through `db` (a sqlite_utils Database)."""
    names: dict[str, int] = {}
    ids, index, columns = [], [], [[] for _ in FRAME_COLUMNS]
    for rows in fetch(db, f"{_SELECT}{' WHERE ' + where if where else ''} ORDER BY 1", args):
        part = list(zip(*rows))
        ids.append(np.array(part[0], dtype=np.int64))
        index.append(np.array([names.setdefault(o or "", len(names)) for o in part[1]], dtype=np.intp))
        for column, values in zip(columns, part[2:]):
            column.append(np.array(values, dtype=float))  # None -> NaN
    if not ids:
        return FrameChunk.empty()
    return FrameChunk(
        np.concatenate(ids),
        list(names),
        np.concatenate(index),
        {key: np.concatenate(column) for key, column in zip(FRAME_COLUMNS, columns)},
    )


def concat(chunks: list[FrameChunk]) -> FrameChunk:
    chunks = [c for c in chunks if len(c)]
    if len(chunks) <= 1:
        return chunks[0] if chunks else FrameChunk.empty()
    names = sorted({n for c in chunks for n in c.origin_names})
    index = np.concatenate([np.array([names.index(n) for n in c.origin_names])[c.origin_index] for c in chunks])
    return FrameChunk(
        np.concatenate([c.ids for c in chunks]),
        names,
        index,
        {k: np.concatenate([c.values[k] for c in chunks]) for k in FRAME_COLUMNS},
    )


class ResultsFrame:
    """Column arrays aligned by row, in arrival order. Rows are never moved: a result that
    goes away is marked dead until the next full reload."""

    def __init__(self):
        self.ids = np.empty(0, np.int64)
        self.alive = np.empty(0, bool)
        self.origin_codes = np.empty(0, np.int16)
        self.origins: list[str] = []  # code -> origin, in order of first appearance
        self.values: dict[str, np.ndarray] = {k: np.empty(0) for k in FRAME_COLUMNS}
        self._lookup: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def count(self) -> int:
        """Live results."""
        return int(self.alive.sum())

    def replace(self, chunk: FrameChunk) -> None:
        self.__init__()
        self.append(chunk)

    def append(self, chunk: FrameChunk) -> slice:
        """Add rows; returns the slice of the new rows."""
        start = len(self.ids)
        if len(chunk):
            codes = np.array([self._code(o) for o in chunk.origin_names], np.int16)[chunk.origin_index]
            self.ids = np.concatenate([self.ids, chunk.ids])
            self.alive = np.concatenate([self.alive, np.ones(len(chunk), bool)])
            self.origin_codes = np.concatenate([self.origin_codes, codes])
            for key in FRAME_COLUMNS:
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
