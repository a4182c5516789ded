"""Quitting with jobs in flight: the window asks whether to let them finish in the background,
cancel them or stay; a background worker finishes them after the window is gone; and a window
opened on a store with queued jobs resumes them by itself; looking for them at start-up
changes none of the default store's files."""

from __future__ import annotations

import os
import time

import pytest
import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.gui import quit_jobs
from app.gui.background_worker import start_background_worker
from core.ir.serialize import read_document
from core.jobs.queue import CANCELLED, DONE, QUEUED, RUNNING, JobQueue
from core.store import Store
from tests.core.test_store_reading import ADD_MEASUREMENTS, NEW_ROWS, files
from tests.store_damage import build_old_store, build_store, damage_page, with_unmerged_wal
from tests.support import EXAMPLES, QUICK, TINY

pytestmark = pytest.mark.gui
ASK = quit_jobs.ask  # the real question (the dialogs fixture answers it for other tests)


@pytest.fixture(autouse=True)
def real_question(dialogs, monkeypatch):
    monkeypatch.setattr(quit_jobs, "ask", ASK)


def queue_measure(store_path, count: int = 1) -> list[int]:
    """Measure jobs of conv2d at TINY sizes (each builds and times a TVM kernel), queued."""
    payload = {"operator": read_document(EXAMPLES / "conv2d.json"), "bindings": TINY, "device": "local", **QUICK}
    with Store(store_path) as store:
        operator = store.add_operator(payload["operator"], "conv2d", "hand-made")
        queue = JobQueue(store)
        return [queue.submit("measure", payload, operator_id=operator) for _ in range(count)]


def job(store_path, job_id: int):
    with Store(store_path) as store:
        return JobQueue(store).get(job_id)


def open_window(qtbot, store_path, tmp_path):
    from app.gui.settings import open_settings
    from app.gui.window import MainWindow

    window = MainWindow(settings=open_settings(tmp_path / "settings.ini"), store=str(store_path))
    window.show()
    qtbot.waitExposed(window)
    return window


def answer_with(button_text: str) -> QTimer:
    """Click `button_text` in the quit question once it shows (it is modal: the test waits in it)."""
    timer = QTimer()
    timer.setInterval(50)

    def click() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.objectName() == "quitJobs":
            timer.stop()
            next(b for b in box.buttons() if b.text() == button_text).click()

    timer.timeout.connect(click)
    timer.start()
    return timer


def test_quitting_asks_and_stay_keeps_the_window_cancel_ends_the_jobs(qtbot, store_path, tmp_path, dialogs):
    ids = queue_measure(store_path, 2)
    window = open_window(qtbot, store_path, tmp_path)
    try:
        session = window.explore.session
        qtbot.waitUntil(lambda: session.workers_running)  # queued work resumes by itself
        qtbot.waitUntil(lambda: sum(quit_jobs.in_flight(session)) == 2, timeout=30_000)
        timer = answer_with("Stay")
        assert not window.close()
        assert not timer.isActive() and window.isVisible() and session.workers_running
        timer = answer_with("Cancel the Jobs")
        assert window.close()
        assert not timer.isActive()
        assert [job(store_path, i).state for i in ids] == [CANCELLED, CANCELLED]
    finally:
        if shiboken6.isValid(window):
            window.close()


@pytest.mark.slow
def test_a_job_left_to_finish_in_the_background_is_finished_by_a_worker(
    qtbot, store_path, tmp_path, dialogs, monkeypatch
):
    started = []
    monkeypatch.setattr(
        quit_jobs, "start_background_worker", lambda *a: started.append(start_background_worker(*a)) or started[-1]
    )
    [job_id] = queue_measure(store_path)
    window = open_window(qtbot, store_path, tmp_path)
    session = window.explore.session
    qtbot.waitUntil(lambda: job(store_path, job_id).state == RUNNING, timeout=60_000)
    gui_worker = job(store_path, job_id).worker_pid
    timer = answer_with("Finish in the Background")
    assert window.close()
    assert not timer.isActive() and session.closed  # the window's own workers are stopped
    assert job(store_path, job_id).state in (QUEUED, RUNNING)
    deadline = time.monotonic() + 300
    while job(store_path, job_id).state in (QUEUED, RUNNING) and time.monotonic() < deadline:
        time.sleep(0.5)
    done = job(store_path, job_id)
    assert done.state == DONE, done.error
    assert done.worker_pid != gui_worker and done.worker_pid != os.getpid()
    [worker] = started
    assert worker.wait(timeout=60) == 0  # it stops once the queue is empty
    assert "stopping when no jobs are left" in (store_path.parent / quit_jobs.LOG_NAME).read_text()


def _older(path) -> None:
    build_old_store(path, 4, rows=20)  # its one job is done: nothing to resume


def _unmerged_wal(path) -> None:
    build_store(path, EXAMPLES, rows=20)
    with_unmerged_wal(path, ADD_MEASUREMENTS, NEW_ROWS)


def _damaged_with_a_queued_job(path) -> None:
    build_store(path, EXAMPLES)
    with Store(path) as store:
        JobQueue(store).submit("sleep", {"seconds": 1})
    damage_page(path, b"marker-00500")  # checkpoints the job into the main file first
    with_unmerged_wal(path, ADD_MEASUREMENTS, NEW_ROWS)


def _read_only_with_a_queued_job(path) -> None:
    build_store(path, EXAMPLES, rows=20)
    with Store(path) as store:
        JobQueue(store).submit("sleep", {"seconds": 1})
    with_unmerged_wal(path, ADD_MEASUREMENTS, NEW_ROWS)
    path.chmod(0o444)


@pytest.mark.parametrize(
    "make, resumed",
    [(_older, False), (_unmerged_wal, False), (_damaged_with_a_queued_job, True), (_read_only_with_a_queued_job, True)],
    ids=["older-schema", "unmerged-wal", "damaged", "read-only"],
)
def test_looking_for_queued_jobs_at_start_up_writes_nothing(make_window, tmp_path, make, resumed):
    """The window starts on the default store only to read whether jobs wait: no migration, no
    -wal merged; a damaged or read-only store with queued jobs is opened (to show them) and
    left as it was too."""
    path = tmp_path / "default-results.db"  # make_window's default store
    make(path)
    before = files(path)
    window = make_window()
    assert window.isVisible()
    assert (window.explore.session is not None) == resumed
    if resumed:
        assert window.explore.session.refusal and not window.explore.session.workers_running
    assert files(path) == before
