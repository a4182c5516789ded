"""Evaluate Accuracy in the window: for the operator in the editor (Run menu) or the selected
results (the Explorer's result panel), ask how (views.explorer.accuracy_dialog), queue the
jobs (core.train.requests.AccuracyRequest through core.jobs.submit: Fisher Potential, proxy
training, tuned end-to-end timing if asked), and follow them in the Accuracy dock: progress per epoch and the accuracy
curves. The scores reach the results table and the plot as every result does."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMessageBox

from core.errors import TesseraError
from core.jobs.submit import Subject, result_subjects
from core.train.requests import AccuracyRequest

if TYPE_CHECKING:
    from views.explorer.accuracy_monitor import AccuracyMonitor


class AccuracyEvaluation(QObject):
    def __init__(self, explore):
        super().__init__(explore)
        self.explore = explore
        self.window = explore.window
        self.dialog = None  # views.explorer.accuracy_dialog.AccuracyDialog while open
        self.dock: QDockWidget | None = None
        self.monitor: AccuracyMonitor | None = None  # in the dock, built on first use
        self.action = QAction("Evaluate &Accuracy…", self.window)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        tip = "Train the current operator in a backbone: Fisher Potential, proxy accuracy, tuned end-to-end speedup"
        self.action.setStatusTip(tip)
        self.action.setToolTip(tip)
        self.action.triggered.connect(self.evaluate_current)

    def evaluate_current(self) -> None:
        """Ask how to evaluate the operator of the page shown (the editor's, or the sequence's
        result), then queue its jobs."""
        subject = self.explore.current_subject()
        if subject is None:
            why = self.window.sequences.why_no_result()
            QMessageBox.warning(self.window, "The sequence has no result", f"Nothing to evaluate yet: {why}.")
            return
        if self.explore.writable_session() is None:
            return
        self._ask(subject.name, [subject])

    def evaluate_results(self, result_ids) -> None:
        """Ask how to evaluate the operators of these results (each once), then queue their jobs."""
        session = self.explore.session
        subjects = result_subjects(session.store, session.rows(result_ids).values(), each_size=False)
        if subjects:
            self._ask(subjects[0].name if len(subjects) == 1 else f"{len(subjects)} selected operators", subjects)

    def _ask(self, subject: str, subjects: list[Subject]) -> None:
        from views.explorer.accuracy_dialog import AccuracyDialog

        self.dialog = AccuracyDialog(self.window, subject)
        self.dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog.submitted.connect(lambda request: self._queue(subjects, request, subject))
        self.dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        self.dialog.open()

    def _queue(self, subjects: list[Subject], request: AccuracyRequest, subject: str) -> None:
        session = self.explore.session
        try:
            ids = session.submit(replace(request, subjects=tuple(subjects))).ids
        except TesseraError as e:
            QMessageBox.critical(self.window, "Cannot queue the jobs", str(e))
            return
        for queued in subjects:
            if queued.input_key is not None:
                self.explore.editor_jobs_queued(queued)
        self.show_monitor().track(ids)
        self.window.statusBar().showMessage(f"Queued {len(ids)} job(s): {request.describe()} for {subject}", 8000)

    def show_monitor(self) -> AccuracyMonitor:
        """The Accuracy dock (built on first use, beside the Jobs dock)."""
        if self.dock is None or self.monitor is None:
            from views.explorer.accuracy_monitor import AccuracyMonitor

            self.monitor = AccuracyMonitor(self.explore.session)
            self.dock = self.window.add_dock("accuracy", "Accuracy", self.monitor, beside="jobs")
        self.dock.show()
        self.dock.raise_()
        return self.monitor
