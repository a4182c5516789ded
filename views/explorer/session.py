"""One results store as the explorer sees it: the GUI thread's connection (small reads
by id, writes), the reader thread (everything big), the job workers, and the state the
views share (all results as a frame, the jobs, the devices).

A QTimer polls: the Supervisor reaps and restarts workers (cheap, never blocks), and the
reader looks for changes; what it finds arrives as signals the views redraw from."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal

from core.errors import TesseraError
from core.ir.graph import OperatorGraph
from core.jobs.executors import choose_executor
from core.jobs.outcomes import take_back_orphans
from core.jobs.queue import QUEUED, RUNNING, Job, JobQueue
from core.jobs.submit import Queued, Request, submit
from core.jobs.supervisor import Supervisor
from core.store import Store, StoreDamaged, StoreError
from core.store.frame import ResultsFrame
from core.store.query import OrderQuery, result_rows
from core.store.searches import SearchRun, runs

from ..result_columns import FRAME_COLUMNS
from .reader import Snapshot, StoreReader
from .reopen import result_graph

POLL_MS = 400


class ExplorerSession(QObject):
    jobsChanged = Signal()  # self.jobs or self.devices changed
    resultsReset = Signal()  # self.frame was replaced (first load, deletions, new scores)
    resultsAdded = Signal(object)  # slice of self.frame holding new results
    resultsRemoved = Signal(object)  # rows of self.frame that died (operators measured at last)
    operatorsRenamed = Signal()  # names shown for results changed
    orderReady = Signal(int, object)  # generation, answer to an OrderQuery (see request_order)
    message = Signal(str)  # a sentence for the status bar
    workersChanged = Signal(bool)  # workers running or not
    ticked = Signal()  # every poll interval (elapsed times move on)
    refused = Signal()  # the store was found damaged after it opened: views stop offering writes
    _requestPoll = Signal(bool)  # to the reader thread: reload everything?
    _requestOrder = Signal(int, object)  # to the reader thread: generation, OrderQuery

    def __init__(self, path: str | Path | None = None, parent=None):
        """Opens the store at `path` (None: the default store); StoreError if it cannot."""
        super().__init__(parent)
        self.store = Store(path)
        self.path = self.store.path
        self.closed = False  # shutdown() closed the store
        self.queue = JobQueue(self.store)
        self.frame = ResultsFrame(FRAME_COLUMNS)
        self.jobs: dict[int, Job] = {}
        self.devices: dict[int, str] = {}
        self.loaded = False  # the first poll has arrived
        self.lost = ""  # of a damaged store, what could not be read (said with the results)
        self.supervisor: Supervisor | None = None
        #: start workers when jobs are queued or retried (a user preference, kept by the window)
        self.autostart_workers = True
        #: where cluster-able jobs run: "local" or "ray", and the Ray address (None: a local
        #: instance); read when workers start (a user preference, kept by the window)
        self.executor = "local"
        self.executor_address: str | None = None
        self._poll_pending = False
        self._reload_wanted = False
        self._orders_pending = 0

        self._thread = QThread(self)
        self._thread.setObjectName("tessera store reader")
        self.reader = StoreReader(self.path)
        self.reader.moveToThread(self._thread)
        self._thread.started.connect(self.reader.open)
        self._thread.finished.connect(self.reader.close, Qt.ConnectionType.DirectConnection)
        self.reader.polled.connect(self._polled)
        self.reader.ordered.connect(self._ordered)
        self._requestPoll.connect(self.reader.poll)
        self._requestOrder.connect(self.reader.order)
        self._thread.start()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.poll)
        self._timer.start()
        self.poll()

    # -- polling ------------------------------------------------------------------------
    def poll(self) -> None:
        """Let the supervisor look at its workers, and ask the reader for changes."""
        if self.supervisor is not None:
            try:
                for line in self.supervisor.poll():
                    self.message.emit(line)
            except TesseraError as e:  # the store cannot be written: its workers are stopped
                self.message.emit(str(e))
                self.stop_workers()
        elif not (self.store.damage or self.store.read_only):
            for line in take_back_orphans(self.queue):  # jobs of workers that are gone are not shown running
                self.message.emit(line)
        self.ticked.emit()
        if not self._poll_pending:
            self._poll_pending = True
            reload, self._reload_wanted = self._reload_wanted, False
            self._requestPoll.emit(reload)

    def reload(self) -> None:
        """Read every result again at the next poll (after this process deleted some)."""
        self._reload_wanted = True
        self.poll()

    @property
    def refusal(self) -> str | None:
        """Why nothing may be written to the store, in the words of a sentence ("the results
        store ... is damaged ..."), or None."""
        if self.store.damage:
            return f"the results store {self.path} is damaged ({self.store.damage})"
        if self.store.read_only:
            return f"the results store {self.path} is read-only ({self.store.read_only})"
        return None

    def _polled(self, snapshot: Snapshot) -> None:
        self._poll_pending = False
        first = not self.loaded
        self.loaded = True
        if snapshot.error:
            self.message.emit(snapshot.error)
        self.lost = snapshot.lost or self.lost
        if snapshot.damage and not self.store.damage:  # the reader met it: this connection writes nothing either
            self.store.note_damage(snapshot.damage)
            self.message.emit(f"{self.refusal}: showing the results that can still be read")
            self.refused.emit()
        if first or snapshot.jobs or (snapshot.devices is not None and snapshot.devices != self.devices):
            self.jobs.update(snapshot.jobs)
            self.devices = snapshot.devices if snapshot.devices is not None else self.devices
            self.jobsChanged.emit()
        if snapshot.reset and snapshot.results is not None:
            self.frame.replace(snapshot.results)
            self.resultsReset.emit()
        elif snapshot.results is not None:
            gone = self.frame.kill(snapshot.gone) if snapshot.gone is not None else np.array([], dtype=np.int64)
            added = self.frame.append(snapshot.results)
            if len(gone):
                self.resultsRemoved.emit(gone)
            if added.stop > added.start:
                self.resultsAdded.emit(added)
        if self._reload_wanted:
            self.poll()

    # -- table order (reader thread) ---------------------------------------------------------
    def request_order(self, generation: int, query: OrderQuery) -> None:
        """Ask the reader thread; the answer comes as orderReady(generation, answer). A
        request without ids starts a new generation: older questions go unanswered."""
        if query.ids is None:
            self.reader.latest_order = generation
        self._orders_pending += 1
        self._requestOrder.emit(generation, query)

    def _ordered(self, generation: int, answer) -> None:
        self._orders_pending -= 1
        self.orderReady.emit(generation, answer)

    def is_idle(self) -> bool:
        """Loaded, with no poll or order request outstanding."""
        return self.loaded and not self._poll_pending and not self._orders_pending

    # -- small reads in the GUI thread ------------------------------------------------------------
    def rows(self, ids) -> dict[int, dict]:
        """Full results rows by result id (indexed queries, fine for a page of ids); of a damaged
        store, from what could be read of it (copied once, Store.readable)."""
        if self.closed:  # a repaint while the window closes reads nothing from the closed store
            return {}
        return result_rows(self.store.readable, ids)

    def row(self, result_id: int) -> dict | None:
        return self.rows([result_id]).get(result_id)

    def result_sequence(self, result_id: int) -> dict | None:
        """The sequence document the result's operator was found by, or None (none, or unreadable)."""
        row = self.row(result_id)
        if row is None:
            return None
        with contextlib.suppress(StoreError):
            return self.store.operator_sequence(row["operator_id"])
        return None

    def trials(self, result_id: int) -> list[tuple[int, float]]:
        """The tuning trials of a measurement (none where a damaged page holds them)."""
        with contextlib.suppress(StoreDamaged):
            return self.store.trials(result_id) if result_id > 0 else []
        return []

    def runs(self) -> list[SearchRun]:
        """The store's discovery runs (none where a damaged page holds them)."""
        with contextlib.suppress(StoreDamaged):
            return runs(self.store)
        return []

    def result_graph(self, result_id: int) -> OperatorGraph:
        row = self.row(result_id)
        if row is None:
            raise StoreError(f"result {result_id} is no longer in {self.path}")
        return result_graph(self.store, self.queue, row)

    def job_summary(self) -> tuple[int, int]:
        """(running, queued) jobs."""
        states = [j.state for j in self.jobs.values()]
        return states.count(RUNNING), states.count(QUEUED)

    # -- writes --------------------------------------------------------------------------------------
    def submit(self, request: Request) -> Queued:
        """Queue a request's jobs (core.jobs.submit) and start workers, if they start automatically."""
        queued = submit(self.store, request)
        self._work_queued()
        return queued

    def cancel(self, job_ids) -> int:
        done = sum(self.queue.cancel(i) for i in job_ids)
        self.poll()
        return done

    def retry(self, job_ids) -> None:
        for job_id in job_ids:
            self.queue.retry(job_id)
        self._work_queued()

    def cancel_stale(self, input_key: str, version: str) -> list[int]:
        cancelled = self.queue.cancel_stale(input_key, version)
        if cancelled:
            self.poll()
        return cancelled

    def delete_results(self, ids) -> int:
        """Delete measurements (ids > 0); unmeasured operators (ids < 0) are not results to delete."""
        count = self.store.delete_measurements([i for i in ids if i > 0])
        self.frame.kill(ids)
        self.resultsReset.emit()
        self.reload()
        return count

    def rename_operator(self, operator_id: int, name: str) -> None:
        self.store.rename_operator(operator_id, name)
        self.operatorsRenamed.emit()

    def _work_queued(self) -> None:
        if self.autostart_workers:
            self.start_workers()
        self.poll()

    # -- workers ------------------------------------------------------------------------------------
    @property
    def workers_running(self) -> bool:
        return self.supervisor is not None

    def start_workers(self) -> None:
        if self.supervisor is not None:
            return
        try:
            cluster = choose_executor(self.executor, self.executor_address)
            supervisor = Supervisor(self.path, ray=cluster)  # one worker per core but one
            events = supervisor.start()
        except TesseraError as e:  # a bad executor setting, a store that cannot be written
            self.message.emit(f"workers not started: {e}")
            return
        self.supervisor = supervisor
        for line in events:
            self.message.emit(line)
        self.message.emit(f"started {self.supervisor.describe()}")
        self.workersChanged.emit(True)

    def stop_workers(self, grace: float = 1.0) -> None:
        """Stop the workers; jobs they were running are queued again (no attempt used)."""
        if self.supervisor is None:
            return
        supervisor, self.supervisor = self.supervisor, None
        for line in supervisor.stop(grace):
            self.message.emit(line)
        self.workersChanged.emit(False)
        if self._timer.isActive():
            self.poll()

    def shutdown(self) -> None:
        """Stop timers, workers and the reader thread, and close the store (window closing)."""
        self._timer.stop()
        self.stop_workers(grace=3.0)
        self._thread.quit()
        self._thread.wait()
        self.store.close()
        self.closed = True
