"""What changed in a store since the last look, read cheaply enough to ask twice a
second over 10^5 results: PRAGMA data_version first (it moves only when another
connection committed), then only new measurements and the changes among the operators
not measured yet; everything again when scores or deletions changed rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .arrays import isin
from .frame import FrameChunk, concat, read_chunk


@dataclass(frozen=True)
class ResultsChange:
    results: FrameChunk  # new results, or all of them when `reset`
    gone: np.ndarray | None = None  # ids of results that went away (operators measured at last)
    reset: bool = False  # `results` replaces what was read before instead of extending it


class StoreChanges:
    """Change detection over one connection (`db`, a sqlite_utils Database) for a reader
    that keeps the numeric result columns `keys`."""

    def __init__(self, db, keys: Sequence[str]):
        self.db, self.keys = db, tuple(keys)
        self._version = None
        self._last_id = 0  # newest measurement read
        self._count = 0  # measurements read
        self._scores = None
        self._operators = None
        self._unmeasured = np.empty(0, np.int64)  # ids of the operator-only rows read

    @property
    def first(self) -> bool:
        """Nothing has been read yet."""
        return self._version is None

    def changed(self) -> bool:
        """Another connection committed since the last call (always True the first time)."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        changed, self._version = version != self._version, version
        return changed

    def results(self, reload: bool = False) -> ResultsChange | None:
        """The results that changed since the last call (None: none); everything with `reload`."""
        db = self.db
        scores = db.execute("SELECT COUNT(*), MAX(id) FROM scores").fetchone()
        operators = db.execute("SELECT COUNT(*), MAX(id) FROM operators").fetchone()
        last_id, count = db.execute("SELECT COALESCE(MAX(id), 0), COUNT(*) FROM measurements").fetchone()
        arrived = db.execute("SELECT COUNT(*) FROM measurements WHERE id > ?", [self._last_id]).fetchone()[0]
        change = None
        if reload or self._scores is None or scores != self._scores or count != self._count + arrived:
            everything = read_chunk(db, self.keys)  # deletions, or new scores change rows
            self._unmeasured = everything.ids[everything.ids < 0]
            change = ResultsChange(everything, reset=True)
        elif arrived or operators != self._operators:
            new = read_chunk(db, self.keys, "measurement_id > ?", [self._last_id])
            unmeasured = read_chunk(db, self.keys, "measurement_id IS NULL")
            change = ResultsChange(
                concat([new, unmeasured.take(~isin(unmeasured.ids, self._unmeasured))], self.keys),
                gone=self._unmeasured[~isin(self._unmeasured, unmeasured.ids)],
            )
            self._unmeasured = unmeasured.ids
        self._scores, self._operators, self._count, self._last_id = scores, operators, count, last_id
        return change
