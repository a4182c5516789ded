"""The Explore side of the main window: the Explorer page, Evaluate and Tune, the job
monitor dock and the status-bar job summary, opening results in the editor, and the
stale-job rule (editing the operator after Tune cancels its jobs).

Nothing here runs until it is needed: the results store opens on the first Explore
action (at once when the window was given --store), the views are built on the first
switch to Explorer, and worker processes start when the first job is queued."""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMessageBox

from core.analysis.summary import why_not_measurable
from core.errors import TesseraError
from core.ir.bindings import check_names
from core.ir.errors import BindingError
from core.ir.sequence import sequence_document, sequence_from_document
from core.ir.serialize import content_hash, to_document
from core.jobs.submit import Subject, result_subjects
from views.editor.document import OperatorDocument

from . import quit_jobs
from .accuracy import AccuracyEvaluation
from .file_commands import maybe_save, watch_export
from .saved_layout import keep_explorer_layout

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDialog

    from views.explorer.devices_dialog import DevicesDialog
    from views.explorer.explorer_view import ExplorerView
    from views.explorer.job_monitor import JobMonitor, JobsIndicator
    from views.explorer.session import ExplorerSession

AUTOSTART_KEY = "explore/autostartWorkers"
EXECUTOR_KEY, RAY_ADDRESS_KEY = "explore/executor", "explore/rayAddress"


class Explore(QObject):
    def __init__(self, window, store_path: str | None):
        super().__init__(window)
        self.window = window
        self.store_path = store_path
        self.session: ExplorerSession | None = None
        self.failure: TesseraError | None = None  # why the store could not be opened, the last time it was tried
        self.view: ExplorerView | None = None
        self.dock: QDockWidget | None = None
        self.monitor: JobMonitor | None = None  # the job monitor in the Jobs dock
        self.indicator: JobsIndicator | None = None  # the status bar's job summary
        self.dialog: QDialog | None = None  # the Evaluate/Tune or Job Runner dialog while it is open
        self.devices_dialog: DevicesDialog | None = None  # the device manager, kept once opened
        self._unsaved_key = uuid.uuid4().hex
        self._submitted: dict[str, str] = {}  # input key -> content hash the current operator's jobs used
        self.actions = self._make_actions()
        self.accuracy = AccuracyEvaluation(self)
        self.actions["accuracy"] = self.accuracy.action

    def _make_actions(self) -> dict[str, QAction]:
        def action(text, slot, shortcut=None, tip="", checkable=False):
            a = QAction(text, self.window)
            if shortcut:
                a.setShortcut(QKeySequence(shortcut))
            a.setToolTip(tip or text.replace("&", "").rstrip("…"))
            a.setStatusTip(tip)
            a.setCheckable(checkable)
            if slot is not None:
                a.triggered.connect(slot)
            return a

        actions = {
            "evaluate": action(
                "E&valuate…",
                lambda: self.measure_current(tune=False),
                "Ctrl+R",
                "Compile and time the current operator with TVM's default schedule",
            ),
            "tune": action(
                "&Tune…",
                lambda: self.measure_current(tune=True),
                "Ctrl+T",
                "Tune the current operator with MetaSchedule, then time it",
            ),
            "transfer": action(
                "Tune with Re&used Schedules…",
                lambda: self.measure_current(tune=True, transfer=True),
                "Ctrl+Shift+T",
                "Apply schedules tuned for kernels of the same class to the "
                "current operator and keep the fastest (transfer-tuning)",
            ),
            "jobs": action("&Jobs", self.show_jobs, "Ctrl+J", "Show the job monitor"),
            "workers": action("Start &Workers", self.toggle_workers, tip="Start or stop the worker processes"),
            "autostart": action(
                "Start Workers &Automatically",
                None,
                checkable=True,
                tip="Start worker processes as soon as jobs are queued",
            ),
            "runner": action(
                "Job &Runner…", self.choose_runner, tip="Run jobs in local worker processes or on a Ray cluster"
            ),
            "devices": action(
                "&Devices…",
                self.show_devices,
                tip="Add RPC devices behind a TVM tracker, check them, choose the default",
            ),
        }
        settings = self.window.settings
        autostart = settings is None or settings.value(AUTOSTART_KEY, True, type=bool)
        actions["autostart"].setChecked(self.window.run_jobs and autostart)
        actions["autostart"].toggled.connect(self._autostart_toggled)
        return actions

    # -- the store, on first need --------------------------------------------------------
    @property
    def opened(self) -> ExplorerSession:
        """The open session, for what only an open store offers (the Explorer's requests, a
        dialog's answer): the views and dialogs that ask exist only once it is open."""
        if self.session is None:
            raise RuntimeError("the results store is not open: ensure_session() first")
        return self.session

    def ensure_session(self) -> ExplorerSession | None:
        """The session over the results store, opened now if needed; None (after telling the
        user why) if the store cannot be opened."""
        if self.session is not None:
            return self.session
        from views.explorer.job_monitor import JobMonitor, JobsIndicator
        from views.explorer.session import ExplorerSession

        try:
            session = self.session = ExplorerSession(self.store_path, self)
        except TesseraError as e:
            self.failure = e
            self.window.statusBar().showMessage(f"Cannot open the results store: {e}")
            box = QMessageBox(QMessageBox.Icon.Critical, "Cannot open the results store", str(e), parent=self.window)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()  # shown, not waited for: the window goes on (and a screenshot says the error, app.gui.main)
            return None
        self.failure = None
        session.autostart_workers = self.actions["autostart"].isChecked()
        session.executor, session.executor_address = self._runner_setting()
        session.message.connect(lambda text: self.window.statusBar().showMessage(text, 8000))
        session.workersChanged.connect(self._workers_changed)
        self.monitor = JobMonitor(session)
        self.dock = self.window.add_dock("jobs", "Jobs", self.monitor)  # beside Diagnostics and Code
        indicator = JobsIndicator(session)
        indicator.activated.connect(self.show_jobs)
        self.window.statusBar().addPermanentWidget(indicator)
        self.indicator = indicator
        quit_jobs.resume(session)
        return session

    def writable_session(self):
        """The session, if jobs may be queued in its store; None after saying why not (it
        cannot open, or it is damaged or read-only)."""
        session = self.ensure_session()
        if session is not None and session.refusal:
            QMessageBox.warning(
                self.window,
                "Cannot queue jobs",
                f"{session.refusal}, so no jobs can be queued in it. Open the window on another store "
                "(tessera gui --store PATH) to measure or evaluate operators.",
            )
            return None
        return session

    def build_view(self):
        """The Explorer page (the plot and the results browser), built a piece per turn of the
        event loop (app.gui.pages) after the store opens; None if the store cannot open."""
        if self.view is None:
            session = self.ensure_session()
            if session is None:
                return None
            yield "store session"
            from views.explorer.explorer_view import ExplorerView

            # made where the page will show (app.gui.pages puts it there): moving it in later restyles it all
            view = self.view = yield from ExplorerView.build(session, self.window.pages.stack)
            view.openRequested.connect(self.open_result)
            view.sequenceRequested.connect(self.open_sequence)
            view.measureRequested.connect(self.measure_results)
            view.accuracyRequested.connect(self.accuracy.evaluate_results)
            view.exportOpened.connect(lambda dialog: watch_export(self.window, dialog))
            keep_explorer_layout(self.window, view)
        return self.view

    def show_jobs(self) -> None:
        if self.ensure_session() is not None and self.dock is not None:
            self.dock.show()
            self.dock.raise_()

    def toggle_workers(self) -> None:
        session = self.ensure_session()
        if session is None:
            return
        if session.workers_running:
            session.stop_workers()
        else:
            session.start_workers()

    def show_devices(self) -> None:
        session = self.ensure_session()
        if session is None:
            return
        if self.devices_dialog is None:
            from views.explorer.devices_dialog import DevicesDialog

            self.devices_dialog = DevicesDialog(session.store, self.window)
            self.devices_dialog.changed.connect(session.poll)
        self.devices_dialog.refresh()
        self.devices_dialog.show()
        self.devices_dialog.raise_()

    def _runner_setting(self) -> tuple[str, str | None]:
        settings = self.window.settings
        if settings is None:
            return "local", None
        return str(settings.value(EXECUTOR_KEY, "local")), str(settings.value(RAY_ADDRESS_KEY, "")) or None

    def choose_runner(self) -> None:
        """Ask where jobs run; kept in the settings, used the next time workers start."""
        from views.explorer.runner_dialog import RunnerDialog

        dialog = self.dialog = RunnerDialog(self.window, *self._runner_setting())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._runner_chosen(*dialog.choice()))
        dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        dialog.open()

    def _runner_chosen(self, executor: str, address: str | None) -> None:
        if self.window.settings is not None:
            self.window.settings.setValue(EXECUTOR_KEY, executor)
            self.window.settings.setValue(RAY_ADDRESS_KEY, address or "")
        if self.session is not None:
            self.session.executor, self.session.executor_address = executor, address
        where = f"Ray ({address or 'a local instance'})" if executor == "ray" else "local workers"
        running = self.session is not None and self.session.workers_running
        self.window.statusBar().showMessage(
            f"jobs will run on {where}" + (" once the workers restart" if running else ""), 8000
        )

    def _autostart_toggled(self, on: bool) -> None:
        if self.window.settings is not None:
            self.window.settings.setValue(AUTOSTART_KEY, on)
        if self.session is not None:
            self.session.autostart_workers = on

    def _workers_changed(self, running: bool) -> None:
        self.actions["workers"].setText("Stop &Workers" if running else "Start &Workers")

    # -- Evaluate / Tune ------------------------------------------------------------------------
    def measure_current(self, tune: bool, transfer: bool = False) -> None:
        """Ask how to measure the operator of the page shown (app.gui.window: the editor's, or
        the result of the sequence on the Sequences page), then queue its jobs."""
        subject = self.current_subject()
        if subject is None:
            why = self.window.sequences.why_no_result()
            QMessageBox.warning(self.window, "The sequence has no result", f"Nothing to measure yet: {why}.")
            return
        if subject.input_key is not None and not self.window.document.summary.shapes.ok:
            QMessageBox.warning(
                self.window, "The operator has errors", "Fix the problems listed under Diagnostics before measuring it."
            )
            return
        if self.writable_session() is None:
            return
        graph = subject.graph
        self._open_dialog(
            tune,
            subject.name,
            [dict(graph.bindings)],
            False,
            lambda b: why_not_measurable(graph, b),
            lambda request: self._submit_current(request, subject),
            transfer,
        )

    def _submit_current(self, request, subject: Subject) -> None:
        # sets without some sizes take them from the operator's own bindings
        sets = tuple({**subject.graph.bindings, **b} for b in request.bindings_sets)
        if self._submit([subject], replace(request, bindings_sets=sets), subject.name) and subject.input_key:
            self.editor_jobs_queued(subject)

    def current_subject(self) -> Subject | None:
        """The operator Evaluate, Tune and Evaluate Accuracy take: on the Sequences page the
        sequence's result (None while it has none), else the editor's operator, whose jobs
        carry its input key (editing it later cancels them: the stale-job rule)."""
        if self.window.pages.current == "sequences":
            editor = self.window.sequences
            document = editor.result_document()
            sequence = sequence_document(editor.sequence)
            return None if document is None else Subject(document, editor.result_name, sequence=sequence)
        document = self.window.document
        return Subject(to_document(document.graph), document.operator_name, input_key=self._input_key())

    def editor_jobs_queued(self, subject: Subject) -> None:
        """Jobs of the editor's operator were queued from `subject`: an edit now makes them stale."""
        assert subject.input_key is not None  # the editor's operator
        self._submitted[subject.input_key] = content_hash(subject.graph)

    def measure_results(self, ids, tune: bool) -> None:
        """Measure the operators of selected results again (their own bindings, or new ones)."""
        subjects = result_subjects(self.opened.store, self.opened.rows(ids).values())
        if not subjects:
            return
        graphs = {content_hash(t.graph): (t.name, t.graph) for t in subjects}

        def check(bindings):
            known = set().union(*(graph.kinds() for _, graph in graphs.values()))
            try:  # one set of sizes for several operators: each name must belong to one of them
                check_names(bindings, known, "the selected operators" if len(graphs) > 1 else subject)
            except BindingError as e:
                return str(e)
            for name, graph in graphs.values():
                problem = why_not_measurable(graph, bindings, names=False)
                if problem:
                    return f"{name}: {problem}"
            return None

        subject = subjects[0].name if len(subjects) == 1 else f"{len(subjects)} selected results"
        measured = all(t.bindings for t in subjects)  # an operator saved without bindings has no sizes
        first = next((t.bindings for t in subjects if t.bindings), {})
        self._open_dialog(
            tune,
            subject,
            [first] if first else [],
            measured,
            check,
            lambda request: self._submit(subjects, request, subject),
        )

    def _open_dialog(self, tune, subject, bindings, own, check, on_submit, transfer: bool = False) -> None:
        from core.devices import list_devices
        from views.explorer.measure_dialog import MeasureDialog

        try:
            devices = list_devices(self.opened.store)
        except TesseraError as e:
            QMessageBox.critical(self.window, "Cannot list the devices", str(e))
            return
        dialog = self.dialog = MeasureDialog(
            self.window,
            tune=tune,
            subject=subject,
            bindings=bindings,
            devices=devices,
            own_bindings=own,
            check=check,
            transfer=transfer,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.submitted.connect(on_submit)
        dialog.unreachable.connect(self._device_unreachable)
        dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        dialog.open()

    def _device_unreachable(self, name: str, check: dict) -> None:
        """A device's tracker did not answer when jobs were about to be queued: the device list
        says so (Run > Devices…, the next Evaluate or Tune)."""
        from core.devices import record_check

        try:
            record_check(self.opened.store, name, check)
        except TesseraError as e:
            self.window.statusBar().showMessage(f"Cannot record {name}'s check: {e}", 8000)
            return
        if self.devices_dialog is not None:
            self.devices_dialog.refresh()

    def _submit(self, subjects, request, subject: str) -> list[int]:
        try:
            queued = self.opened.submit(replace(request, subjects=tuple(subjects)))
        except TesseraError as e:
            QMessageBox.critical(self.window, "Cannot queue the jobs", str(e))
            return []
        left_out = f" (left out: {'; '.join(queued.notes)})" if queued.notes else ""
        self.window.statusBar().showMessage(
            f"Queued {len(queued.ids)} job(s): {request.describe()} {subject}{left_out}", 15000 if left_out else 8000
        )
        self.show_jobs()
        return queued.ids

    # -- the stale-job rule ------------------------------------------------------------------------
    def _input_key(self) -> str:
        """What jobs of the editor's operator are computed from: its file, or this unsaved document."""
        path = self.window.document.path
        return str(Path(path).resolve()) if path else f"unsaved:{self._unsaved_key}"

    def document_replaced(self) -> None:
        """A new document in the editor: jobs of the old one are not stale, just not ours to watch."""
        self._submitted.clear()
        self._unsaved_key = uuid.uuid4().hex

    def operator_edited(self) -> None:
        """After an edit, undo or redo: cancel the queued and running jobs of older versions."""
        if not self._submitted or self.session is None:
            return
        try:
            version = content_hash(to_document(self.window.document.graph))
        except TesseraError:
            version = ""
        for key, submitted in list(self._submitted.items()):
            if submitted == version:
                continue
            del self._submitted[key]
            cancelled = self.session.cancel_stale(key, version)
            if cancelled:
                self.window.statusBar().showMessage(
                    f"Cancelled {len(cancelled)} job(s) of the previous version: the operator changed "
                    "after it was queued",
                    8000,
                )

    # -- results into the editor --------------------------------------------------------------------
    def open_result(self, result_id: int) -> None:
        if not maybe_save(self.window):
            return
        try:
            graph = self.opened.result_graph(result_id)
        except TesseraError as e:
            QMessageBox.critical(self.window, "Cannot open the result", str(e))
            return
        self.window.set_document(OperatorDocument(graph, parent=self.window))
        self.window.statusBar().showMessage(
            f"Opened {graph.name} (result {result_id}) from {self.opened.path.name}", 8000
        )

    def open_sequence(self, result_id: int) -> None:
        """The transformation sequence a search found the result's operator by, in the sequence editor."""
        document = self.opened.result_sequence(result_id)
        if document is None:
            self.window.statusBar().showMessage("The selected result was not found by a sequence search", 8000)
            return
        try:
            seq = sequence_from_document(document, f"a result's sequence in {self.opened.path.name}")
        except TesseraError as e:
            QMessageBox.critical(self.window, "Cannot open the sequence", str(e))
            return
        self.window.sequences.show_sequence(seq)
        self.window.show_page("sequences")
        row = self.opened.row(result_id) or {}
        self.window.statusBar().showMessage(
            f"Opened the sequence that found {row.get('operator_name') or 'the operator'} "
            f"({len(seq.steps)} step{'s' * (len(seq.steps) != 1)})",
            8000,
        )

    # -- life cycle ----------------------------------------------------------------------------------
    def is_idle(self) -> bool:
        if self.session is None:
            return True
        return self.session.is_idle() and (self.view is None or self.view.is_idle())

    def shutdown(self) -> None:
        if self.session is not None:
            self.session.shutdown()
