"""The reader thread: everything that reads many rows of the store runs here, on its own
SQLite connection, so the GUI thread never waits for a query over 10^5 results. What to
read (change detection, the table's order) is core's (core.store.changes, query); this
thread only runs it and hands the answers over as signals.

A damaged store (found so when opened, or by any read later) is read once, around its
damaged pages, into a copy in memory (core.store.salvage) that the table's order and filter
run on; nothing watches it for changes, since nothing writes to it any more."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from core.errors import TesseraError
from core.jobs.queue import Job, JobQueue
from core.jobs.watch import JobWatcher
from core.store import Store, StoreDamaged
from core.store.changes import StoreChanges
from core.store.frame import FrameChunk, read_chunk
from core.store.query import OrderQuery
from core.store.table_order import TableOrder

from ..result_columns import FRAME_COLUMNS

if TYPE_CHECKING:
    from sqlite_utils import Database


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
    damage: str = ""  # what SQLite found damaged in the store: `results` are what could be read
    lost: str = ""  # of a damaged store, what could not be read (core.store.salvage.Salvage.note)


class StoreReader(QObject):
    polled = Signal(object)  # Snapshot, after every poll request
    ordered = Signal(int, object)  # generation, the OrderQuery's answer (None: superseded)

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self.store: Store | None = None
        self.readable: Database | None = None  # of a damaged store: its readable results, in memory
        #: set from the GUI thread; order requests of older generations are skipped
        self.latest_order = 0

    @Slot()
    def open(self) -> None:
        self.store = Store(self.path, reading=True)  # the session's own connection writes
        self.changes = StoreChanges(self.store.db, FRAME_COLUMNS)
        self.jobs = JobWatcher(JobQueue(self.store))

    @Slot()
    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def _opened(self) -> Store:
        """The store `open` made: the thread's requests all come between open and close."""
        if self.store is None:
            raise RuntimeError(f"the reader of {self.path} was asked to read before open() or after close()")
        return self.store

    @Slot(bool)
    def poll(self, reload: bool) -> None:
        try:
            snapshot = self._salvage(reload) if self._opened().damage else self._watch(reload)
        except (TesseraError, sqlite3.Error) as e:
            snapshot = Snapshot(error=f"cannot read {self.path}: {e}")
        self.polled.emit(snapshot)

    def _watch(self, reload: bool) -> Snapshot:
        try:
            with self._opened().snapshot():  # one consistent view of the file for the whole poll
                return self._poll(reload)
        except StoreDamaged:  # met by this poll: read around it from now on
            return self._salvage(True)

    @Slot(int, object)
    def order(self, generation: int, query: OrderQuery) -> None:
        if generation != self.latest_order:
            self.ordered.emit(generation, None)  # the user sorted or filtered again meanwhile
            return
        try:
            answer = query.read(self._opened().db if self.readable is None else self.readable)
        except (TesseraError, sqlite3.Error) as e:  # the filter was checked when parsed; this is the store failing
            answer = TableOrder([], [], True, query.descending)
            self.polled.emit(Snapshot(error=f"cannot read {self.path}: {e}"))
        self.ordered.emit(generation, answer)

    def _poll(self, reload: bool) -> Snapshot:
        if not self.changes.changed() and not reload:
            return Snapshot()
        snapshot = Snapshot(changed=True, jobs=self.jobs.changed_jobs())
        snapshot.devices = {d["id"]: d["name"] for d in self._opened().devices()}
        change = self.changes.results(reload)
        if change is not None:
            snapshot.results, snapshot.gone, snapshot.reset = change.results, change.gone, change.reset
        return snapshot

    def _salvage(self, reload: bool) -> Snapshot:
        """Every readable result of the damaged store, the first time (or on reload); then
        nothing more. Jobs and devices as far as they can be read."""
        if self.readable is not None and not reload:
            return Snapshot()
        store = self._opened()
        saved = store.salvaged()
        self.readable = saved.db
        snapshot = Snapshot(changed=True, reset=True, damage=store.damage or "", lost=saved.note())
        snapshot.results = read_chunk(self.readable, FRAME_COLUMNS)
        with contextlib.suppress(StoreDamaged):  # the results matter here, not a damaged jobs table
            snapshot.jobs = self.jobs.changed_jobs()
            snapshot.devices = {d["id"]: d["name"] for d in store.devices()}
        return snapshot
