"""The reader thread: everything that reads many rows of the store runs here, on its own
SQLite connection, so the GUI thread never waits for a query over 10^5 results.

A poll looks at PRAGMA data_version first (it changes only when another connection
committed) and then reads only what changed: jobs that are or were active, results
newer than the last id seen, everything again if scores or the row count changed."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from core.ir.errors import TesseraError
from core.jobs.queue import QUEUED, RUNNING, Job, JobQueue
from core.store import Store

from .arrays import isin
from .frame import RESULT_ID, FrameChunk, by_ids, concat, fetch, read_chunk
from .table_order import TableOrder

ENDED_MARGIN_S = 30.0  # jobs that ended this long before the last poll are read again


@dataclass(frozen=True)
class OrderRequest:
    """The results table's question: the results matching `where`, sorted by `order_by`;
    with `ids`, only the sort keys of those results (new arrivals)."""

    where: str
    args: tuple
    order_by: str
    numeric: bool
    descending: bool
    ids: tuple[int, ...] | None = None

    def read(self, db) -> TableOrder | tuple[list[int], list]:
        filtered = f" AND ({self.where})" if self.where else ""
        if self.ids is not None:
            found = [
                row
                for clause, args in by_ids(self.ids)
                for rows in fetch(
                    db,
                    f"SELECT {RESULT_ID}, {self.order_by} FROM results WHERE {clause}{filtered}",
                    [*args, *self.args],
                )
                for row in rows
            ]
            return [r[0] for r in found], [r[1] for r in found]
        direction = "DESC" if self.descending else "ASC"
        sql = (
            f"SELECT {RESULT_ID}, {self.order_by} FROM results{' WHERE ' + self.where if self.where else ''} "
            f"ORDER BY {self.order_by} IS NULL, {self.order_by} {direction}, 1 {direction}"
        )
        ids, keys = [], []
        for rows in fetch(db, sql, self.args):
            ids += [r[0] for r in rows]
            keys += [r[1] for r in rows]
        return TableOrder(ids, keys, self.numeric, self.descending)


@dataclass
class Snapshot:
    """What one poll found; empty fields mean unchanged."""

    jobs: dict[int, Job] = field(default_factory=dict)
    devices: dict[int, str] | None = None
    results: FrameChunk | None = None  # new results, or all of them when `reset`
    gone: np.ndarray | None = None  # ids of results that went away (operators measured at last)
    reset: bool = False  # `results` replaces the frame instead of extending it
    changed: bool = False  # the store changed since the previous poll
    error: str = ""


class StoreReader(QObject):
    polled = Signal(object)  # Snapshot, after every poll request
    ordered = Signal(int, object)  # generation, the OrderRequest's answer (None: superseded)

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self.store: Store | None = None
        #: set from the GUI thread; order requests of older generations are skipped
        self.latest_order = 0
        self._version = None
        self._active: set[int] = set()
        self._last_poll = 0.0
        self._last_id = 0  # newest measurement read
        self._count = 0  # measurements read
        self._scores = None
        self._operators = None
        self._unmeasured = np.empty(0, np.int64)  # ids of the operator-only rows read

    @Slot()
    def open(self) -> None:
        self.store = Store(self.path)
        self.queue = JobQueue(self.store)

    @Slot()
    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    @Slot(bool)
    def poll(self, reload: bool) -> None:
        conn = self.store.db.conn
        try:
            conn.execute("BEGIN")  # one consistent view of the file for the whole poll
            try:
                snapshot = self._poll(reload)
            finally:
                conn.commit()
        except (TesseraError, sqlite3.Error) as e:
            snapshot = Snapshot(error=f"cannot read {self.path}: {e}")
        self.polled.emit(snapshot)

    @Slot(int, object)
    def order(self, generation: int, request: OrderRequest) -> None:
        if generation != self.latest_order:
            self.ordered.emit(generation, None)  # the user sorted or filtered again meanwhile
            return
        try:
            answer = request.read(self.store.db)
        except sqlite3.Error as e:  # the filter was checked when parsed; this is the store failing
            answer = TableOrder([], [], request.numeric, request.descending)
            self.polled.emit(Snapshot(error=f"cannot read {self.path}: {e}"))
        self.ordered.emit(generation, answer)

    # -- reading ------------------------------------------------------------------------
    def _poll(self, reload: bool) -> Snapshot:
        db = self.store.db
        version = db.execute("PRAGMA data_version").fetchone()[0]
        first = self._version is None
        if version == self._version and not reload:
            return Snapshot()
        self._version = version
        snapshot = Snapshot(changed=True, jobs=self._jobs(first))
        snapshot.devices = {d["id"]: d["name"] for d in self.store.devices()}
        scores = db.execute("SELECT COUNT(*), MAX(id) FROM scores").fetchone()
        operators = db.execute("SELECT COUNT(*), MAX(id) FROM operators").fetchone()
        last_id, count = db.execute("SELECT COALESCE(MAX(id), 0), COUNT(*) FROM measurements").fetchone()
        arrived = db.execute("SELECT COUNT(*) FROM measurements WHERE id > ?", [self._last_id]).fetchone()[0]
        if first or reload or scores != self._scores or count != self._count + arrived:
            snapshot.results, snapshot.reset = read_chunk(db), True  # deletions, or new scores change rows
            self._unmeasured = snapshot.results.ids[snapshot.results.ids < 0]
        elif arrived or operators != self._operators:
            new = read_chunk(db, "measurement_id > ?", [self._last_id])
            unmeasured = read_chunk(db, "measurement_id IS NULL")
            snapshot.results = concat([new, unmeasured.take(~isin(unmeasured.ids, self._unmeasured))])
            snapshot.gone = self._unmeasured[~isin(self._unmeasured, unmeasured.ids)]
            self._unmeasured = unmeasured.ids
        self._scores, self._operators, self._count, self._last_id = scores, operators, count, last_id
        return snapshot

    def _jobs(self, first: bool) -> dict[int, Job]:
        """Every job the first time; then the active ones, those active at the last poll
        (they may have ended) and those that ended lately (queued and done in between)."""
        started = time.time()
        if first:
            jobs = {j.id: j for j in self.queue.jobs()}
        else:
            jobs = {j.id: j for j in self.queue.jobs([QUEUED, RUNNING])}
            for job_id in self._active - set(jobs):
                jobs[job_id] = self.queue.get(job_id)
            for job in self.queue.ended_since(self._last_poll - ENDED_MARGIN_S):
                jobs.setdefault(job.id, job)
        self._active = {j.id for j in jobs.values() if j.state in (QUEUED, RUNNING)}
        self._last_poll = started
        return jobs
