"""The reader thread: everything that reads many rows of the store runs here, on its own
SQLite connection, so the GUI thread never waits for a query over 10^5 results. What to
read (change detection, the table's order) is core's (core.store.changes, query); this
thread only runs it and hands the answers over as signals."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from core.ir.errors import TesseraError
from core.jobs.queue import Job, JobQueue
from core.jobs.watch import JobWatcher
from core.store import Store
from core.store.changes import StoreChanges
from core.store.frame import FrameChunk
from core.store.query import OrderQuery
from core.store.table_order import TableOrder

from .columns import FRAME_COLUMNS


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
    ordered = Signal(int, object)  # generation, the OrderQuery's answer (None: superseded)

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self.store: Store | None = None
        #: set from the GUI thread; order requests of older generations are skipped
        self.latest_order = 0

    @Slot()
    def open(self) -> None:
        self.store = Store(self.path)
        self.changes = StoreChanges(self.store.db, FRAME_COLUMNS)
        self.jobs = JobWatcher(JobQueue(self.store))

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
    def order(self, generation: int, query: OrderQuery) -> None:
        if generation != self.latest_order:
            self.ordered.emit(generation, None)  # the user sorted or filtered again meanwhile
            return
        try:
            answer = query.read(self.store.db)
        except sqlite3.Error as e:  # the filter was checked when parsed; this is the store failing
            answer = TableOrder([], [], True, query.descending)
            self.polled.emit(Snapshot(error=f"cannot read {self.path}: {e}"))
        self.ordered.emit(generation, answer)

    def _poll(self, reload: bool) -> Snapshot:
        if not self.changes.changed() and not reload:
            return Snapshot()
        snapshot = Snapshot(changed=True, jobs=self.jobs.changed_jobs())
        snapshot.devices = {d["id"]: d["name"] for d in self.store.devices()}
        change = self.changes.results(reload)
        if change is not None:
            snapshot.results, snapshot.gone, snapshot.reset = change.results, change.gone, change.reset
        return snapshot
