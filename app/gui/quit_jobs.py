"""Quitting with jobs running or queued: the window asks whether to let them finish in the
background (a worker process of their own goes on after the window closes, background_worker.py),
to cancel them, or to stay."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from core.errors import TesseraError
from core.jobs.queue import HOST, QUEUED, RUNNING, JobQueue
from core.store import Store

from .background_worker import LOG_NAME, start_background_worker

FINISH, CANCEL, STAY = "finish", "cancel", "stay"


def ask(parent: QWidget, running: int, queued: int) -> str:
    """FINISH, CANCEL or STAY (also when the question is dismissed)."""
    counts = " and ".join(text for n, text in ((running, f"{running} running"), (queued, f"{queued} queued")) if n)
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Jobs are not finished",
        f"{counts} job{'s' * (running + queued > 1)} would stop with the window.",
        parent=parent,
    )
    box.setObjectName("quitJobs")
    box.setInformativeText(
        "Finish in the background: a worker goes on after the window closes and stops when the "
        "queue is empty; the results appear in the Explorer next time. Cancel the jobs: they end now."
    )
    finish = box.addButton("Finish in the Background", QMessageBox.ButtonRole.AcceptRole)
    cancel = box.addButton("Cancel the Jobs", QMessageBox.ButtonRole.DestructiveRole)
    stay = box.addButton("Stay", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(finish)
    box.setEscapeButton(stay)
    box.exec()
    clicked = box.clickedButton()
    return FINISH if clicked is finish else CANCEL if clicked is cancel else STAY


def in_flight(session) -> tuple[int, int]:
    """(running, queued) jobs that closing the window would stop: those its workers run, and the
    queued ones they would have taken. (0, 0) while its workers are stopped."""
    if session is None or session.closed or session.supervisor is None:
        return 0, 0
    pids = set(session.supervisor.worker_pids)
    jobs = session.queue.jobs([RUNNING, QUEUED])
    running = sum(j.state == RUNNING and j.worker_host == HOST and j.worker_pid in pids for j in jobs)
    return running, sum(j.state == QUEUED for j in jobs)


def settle(session, answer: str) -> str:
    """Do what the user chose for the jobs in flight; returns what was done, in a sentence."""
    if answer == CANCEL:
        ids = [j.id for j in session.queue.jobs([RUNNING, QUEUED])]
        session.stop_workers()
        return f"cancelled {session.cancel(ids)} job(s)"
    session.stop_workers()  # the jobs they ran are queued again, for the background worker
    worker = start_background_worker(session.path)
    return f"background worker {worker.pid} runs the queue on {session.path} (log: {LOG_NAME} beside it)"


def resume(session) -> None:
    """Jobs left queued (by a window closed with them, or workers that were stopped) start again
    as soon as the window opens their store, when workers start by themselves."""
    if session.autostart_workers and not session.refusal and session.queue.jobs([QUEUED]):
        session.message.emit("resuming the queued jobs")
        session.start_workers()


def work_waiting(store: Path) -> bool:
    """The store at `store` has queued jobs (the window then opens it at once, to resume them).
    Only read: a window start that finds none changes none of the store's files."""
    if not store.is_file():
        return False
    try:
        with Store(store, reading=True) as opened:
            return bool(JobQueue(opened).jobs([QUEUED]))
    except TesseraError:
        return False  # the Explorer says what is wrong with it when it is opened
