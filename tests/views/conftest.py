"""Fixtures for GUI tests: a real main window with throw-away settings, and a
guard that fails any GUI test leaving threads, thread pools, timers, worker
processes or top-level widgets behind (napari's approach, condensed)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
import traceback
import weakref

import pytest
import shiboken6
from PySide6.QtCore import QEvent, QThread, QThreadPool, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from .helpers import open_explorer

# read when pytest-qt creates the QApplication, after these imports
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

GRACE_S = 3.0  # how long finished work may take to wind down after a test


def _where() -> str:
    frames = [
        f for f in traceback.extract_stack()[:-2] if "conftest" not in f.filename and "site-packages" not in f.filename
    ]
    return "".join(traceback.format_list(frames[-3:]))


@pytest.fixture(autouse=True)
def themed(request):
    """GUI tests see the window as users do: Fusion with Tessera's light style sheet (which
    sets paddings, and so sizes), whatever test ran before."""
    if "qtbot" in request.fixturenames or "window" in request.fixturenames:
        from views.theme import SCHEME, apply_theme

        if SCHEME != "light" or QApplication.instance().styleSheet() == "":
            apply_theme(request.getfixturevalue("qapp"), "light")


@pytest.fixture(autouse=True)
def no_leaks(request, monkeypatch):
    """Every GUI test must end with no running timers, pools, threads, processes or new windows."""
    if "qtbot" not in request.fixturenames and "window" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("qapp")
    timers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    pools: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    qthreads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    timer_start, pool_start, qthread_start = QTimer.start, QThreadPool.start, QThread.start

    def start_timer(self, *args):
        timers[self] = _where()
        timer_start(self, *args)

    def single_shot(*args):
        if len(args) == 2 and callable(args[1]):  # singleShot(msec, callable): track it as a real timer
            timer = QTimer()
            timer.setSingleShot(True)
            timer.timeout.connect(args[1])
            start_timer(timer, args[0])
            return
        raise AssertionError("use QTimer objects (tracked) instead of this QTimer.singleShot overload")

    def start_pool(self, *args):
        pools[self] = _where()
        pool_start(self, *args)

    def start_qthread(self, *args):
        qthreads[self] = _where()
        qthread_start(self, *args)

    monkeypatch.setattr(QTimer, "start", start_timer)
    monkeypatch.setattr(QTimer, "singleShot", staticmethod(single_shot))
    monkeypatch.setattr(QThreadPool, "start", start_pool)
    monkeypatch.setattr(QThread, "start", start_qthread)
    threads_before = set(threading.enumerate())
    widgets_before = set(QApplication.topLevelWidgets())
    yield

    app = QApplication.instance()
    deadline = time.monotonic() + GRACE_S

    def settle() -> None:
        app.processEvents()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()

    def leftovers() -> list[str]:
        problems = []
        for timer, where in list(timers.items()):
            try:
                if timer.isActive():
                    problems.append(f"QTimer still active, started at\n{where}")
            except RuntimeError:  # its C++ object was deleted: not running
                pass
        for pool, where in list(pools.items()):
            try:
                if pool.activeThreadCount():
                    problems.append(f"QThreadPool still busy, used at\n{where}")
            except RuntimeError:
                pass
        for thread, where in list(qthreads.items()):
            try:
                if thread.isRunning():
                    problems.append(f"QThread still running, started at\n{where}")
            except RuntimeError:
                pass
        problems += [
            f"Python thread still alive: {t.name}" for t in set(threading.enumerate()) - threads_before if t.is_alive()
        ]
        problems += [f"worker process still alive: {p.name} (pid {p.pid})" for p in multiprocessing.active_children()]
        problems += [
            f"top-level widget not deleted: {type(w).__name__} {w.objectName()!r}"
            for w in set(QApplication.topLevelWidgets()) - widgets_before
        ]
        return problems

    settle()
    problems = leftovers()
    while problems and time.monotonic() < deadline:
        time.sleep(0.05)
        settle()
        problems = leftovers()
    for timer in list(timers):  # do not let a leak spill into the next test
        with contextlib.suppress(RuntimeError):
            timer.stop()
    for w in set(QApplication.topLevelWidgets()) - widgets_before:
        w.deleteLater()
    settle()
    assert not problems, "GUI test leaked:\n" + "\n".join(problems)


class DialogRecorder:
    """Stands in for QMessageBox's static dialogs, which would block an offscreen test."""

    def __init__(self):
        self.calls: list[tuple[str, str, str]] = []
        self.answer = QMessageBox.StandardButton.Discard
        self.jobs_answer = "cancel"  # to the question quitting with jobs in flight asks (app.gui.quit_jobs)

    def patch(self, monkeypatch) -> None:
        from app.gui import quit_jobs

        for kind in ("question", "critical", "warning", "information"):
            monkeypatch.setattr(QMessageBox, kind, staticmethod(self._make(kind)))
        monkeypatch.setattr(quit_jobs, "ask", self._jobs_question)

    def _jobs_question(self, parent, running: int, queued: int) -> str:
        self.calls.append(("jobs", "Jobs are not finished", f"{running} running, {queued} queued"))
        return self.jobs_answer

    def _make(self, kind):
        def dialog(parent, title, text, *args, **kwargs):
            self.calls.append((kind, title, text))
            return self.answer if kind == "question" else QMessageBox.StandardButton.Ok

        return dialog


@pytest.fixture
def dialogs(monkeypatch) -> DialogRecorder:
    recorder = DialogRecorder()
    recorder.patch(monkeypatch)
    return recorder


@pytest.fixture
def settings_path(tmp_path):
    return tmp_path / "settings.ini"


@pytest.fixture
def make_window(qtbot, settings_path, dialogs, monkeypatch, tmp_path):
    """Create shown main windows using a temporary settings file (and a temporary default
    store: never the user's); closes the survivors."""
    monkeypatch.setenv("TESSERA_STORE", str(tmp_path / "default-results.db"))

    from app.gui.settings import open_settings
    from app.gui.window import MainWindow

    created = []

    def make():
        window = MainWindow(settings=open_settings(settings_path))
        created.append(window)
        window.resize(1440, 900)  # a desktop's window (it opens fitted to the small offscreen screen)
        window.show()
        qtbot.waitExposed(window)
        return window

    yield make
    for window in created:
        if shiboken6.isValid(window):
            window.close()  # unsaved changes are discarded by the dialog recorder
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def window(make_window):
    return make_window()


@pytest.fixture
def explorer(qtbot, dialogs, store_path, tmp_path):
    """A shown main window over `store_path`, switched to the Explorer, with workers off."""
    from app.gui.settings import open_settings

    window = open_explorer(qtbot, store_path, open_settings(tmp_path / "settings.ini"), (1400, 900))
    try:
        yield window
    finally:
        if shiboken6.isValid(window):
            window.close()
