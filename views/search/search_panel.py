"""The Search page: the settings (views.search.search_settings) beside the run.

Discover runs the discovery loop in a thread of its own (views.search.discovery_thread); its stage
jobs (Fisher Potential, proxy training, tuned end-to-end timing) run in the session's worker
processes, which start with the run. The stage counts, the progress and the time update
every round. A run is kept in the store under the key of its settings, so starting again
with the same settings resumes it; the panel says which before Start is pressed.

Propose only queues one "search" job (core.search.driver:search_job) whose candidates land
in the store as it goes, streaming into the results browser and the Pareto plot."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from core.errors import TesseraError
from core.jobs.queue import DONE, FAILED, QUEUED, RUNNING, duration_text
from core.jobs.supervisor import default_worker_count
from core.search.discovery import DiscoveryConfig
from core.search.driver import SearchRequest
from core.store.searches import find_run, stage_counts

from .discovery_status import StageCounts, baseline_text, best_text, references_text, time_text
from .discovery_thread import DiscoveryThread
from .search_settings import SearchSettings

RESUME_NOTE = "Starting again with the same settings resumes a run where it stopped."


class SearchPanel(QWidget):
    searchStarted = Signal(int)  # job id of a plain search
    discoveryStarted = Signal()
    discoveryEnded = Signal(object, str)  # the run's summary (None after an error), the error or ""

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.job_id: int | None = None
        self.run: DiscoveryThread | None = None
        self._run_config: DiscoveryConfig | None = None
        self._last: tuple[float, dict] = (0.0, {})  # the latest fraction and summary of the run
        self.settings = SearchSettings()

        self.start_button = QPushButton("Start")
        self.start_button.setDefault(True)
        self.stop_button = QPushButton("Stop")
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.resume_hint = _label("hint")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.time_label = _label("hint")
        self.counts = StageCounts()
        self.baseline_label = _label()
        self.best_label = _label()
        self.references_label = _label()  # the best beside its references, and the headline
        self.references_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status = _label()
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        card = QFrame()
        card.setObjectName("runCard")
        run = QVBoxLayout(card)
        run.setSpacing(10)
        title = QLabel("Run")
        title.setObjectName("runTitle")
        run.addWidget(title)
        run.addLayout(buttons)
        run.addWidget(self.resume_hint)
        run.addWidget(self.progress)
        run.addWidget(self.time_label)
        run.addWidget(self.counts)
        run.addWidget(self.baseline_label)
        run.addWidget(self.best_label)
        run.addWidget(self.references_label)
        run.addWidget(self.status)
        run.addStretch(1)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self.settings)
        # as wide as the settings need (they scroll down, never sideways), and not much wider
        width = self.settings.minimumSizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 4
        scroll.setMinimumWidth(width)
        scroll.setMaximumWidth(max(width, 560))
        layout = QHBoxLayout(self)
        layout.addWidget(scroll, 2)
        layout.addWidget(card, 3)

        session.jobsChanged.connect(self._jobs_changed)
        session.ticked.connect(self._show_time)
        self.settings.changed.connect(self._settings_changed)
        self.settings.mode.currentIndexChanged.connect(self._mode_changed)
        self._mode_changed()
        self._show_running(False)

    # -- starting and stopping -------------------------------------------------------------
    def start(self) -> None:
        if self.settings.discovering:
            self._start_discovery()
        else:
            self._start_search()

    def stop(self) -> None:
        if self.run is not None:
            self.run.stop()
            self.stop_button.setEnabled(False)
            self._say("Stopping: the jobs in flight are cancelled; a new start with the same settings resumes them.")
        elif self.job_id is not None:
            self.session.cancel([self.job_id])

    def shutdown(self) -> None:
        """Stop a discovery run and wait for its thread (the window is closing)."""
        if self.run is not None:
            self.run.stop()
            self.run.wait()

    def _start_discovery(self) -> None:
        try:
            config = self.settings.discovery_config(in_flight=max(2, default_worker_count()))
        except (TesseraError, OSError) as e:
            self._say(f"Cannot start: {e}", error=True)
            return
        self.session.start_workers()  # the stages are jobs: without workers the run would wait forever
        if not self.session.workers_running:
            self._say("Cannot start: the worker processes did not start (see the status bar, Run > Job Runner…)", True)
            return
        self._run_config = DiscoveryConfig.from_dict(config)
        self.counts.show_tuned(self._run_config.tune)
        resumed = find_run(self.session.store, self._run_config.key)
        self._last = (0.0, {})
        self.counts.show_counts(stage_counts(self.session.store, resumed) if resumed else {})
        self.baseline_label.setText(baseline_text({"baseline_accuracy": resumed and resumed.baseline_accuracy}))
        self.best_label.clear()
        self.references_label.clear()
        self.progress.setValue(0)
        self.run = DiscoveryThread(config, str(self.session.path), self)
        self.run.reported.connect(self._reported)
        self.run.ended.connect(self._ended)
        self.run.start()
        self._show_running(True)
        self._say(f"Resuming run {resumed.id} ({resumed.name})." if resumed else "A new run started.")
        self.resume_hint.setText("Stop keeps what is done: starting again with the same settings resumes this run.")
        self._show_time()
        self.discoveryStarted.emit()

    def _reported(self, fraction: float, summary: dict) -> None:
        self._last = (fraction, summary)
        self.progress.setValue(int(1000 * fraction))
        self.counts.show_counts(summary["counts"])
        self.baseline_label.setText(baseline_text(summary))
        self.best_label.setText(best_text(summary, self._run_config.tune))
        self.references_label.setText(references_text(summary))
        self._show_time()

    def _ended(self, summary: dict | None, error: str) -> None:
        run, self.run = self.run, None
        run.wait()
        run.deleteLater()
        self._show_running(False)
        if summary is not None:
            self._reported(self._last[0] if run.stopping else 1.0, summary)
        self.time_label.setText(f"Took {duration_text(time.monotonic() - run.started_at)}")  # no time is left
        if error:
            self._say(f"The run stopped: {error}", error=True)
        else:
            how = "Stopped" if run.stopping else "Finished"
            self._say(f"{how} after {summary['seconds']:g} s: {self.counts.text()}. {RESUME_NOTE}")
        self._settings_changed()
        self.discoveryEnded.emit(summary, error)

    def _start_search(self) -> None:
        try:
            self.job_id = self.session.submit(SearchRequest(self.settings.search_config())).ids[0]
        except (TesseraError, OSError) as e:  # bad settings, or a store that cannot be written
            self._say(f"Cannot start: {e}", error=True)
            return
        self._say(f"Search job {self.job_id} queued")
        self._show_running(True)
        self.searchStarted.emit(self.job_id)

    # -- what the panel shows -------------------------------------------------------------------
    def _search_running(self) -> bool:
        job = self.session.jobs.get(self.job_id) if self.job_id is not None else None
        return job is not None and job.state in (QUEUED, RUNNING)

    def _jobs_changed(self) -> None:
        job = self.session.jobs.get(self.job_id) if self.job_id is not None else None
        if job is None or self.run is not None:
            return
        self._show_running(self._search_running())
        self.progress.setValue(int(1000 * (job.progress or 0)))
        if job.state in (QUEUED, RUNNING):
            self._say(job.message or f"search job {job.id} {job.state}")
        elif job.state == DONE:
            self._say(f"Search finished: {job.message}")  # its result's line (core.search.results)
        elif job.state == FAILED:
            self._say(f"Search failed: {job.error}", error=True)
        else:
            self._say(f"Search {job.state}")

    def _show_time(self) -> None:
        if self.run is None:
            return
        fraction, summary = self._last
        in_flight = summary.get("counts", {}).get("in flight", 0)
        self.time_label.setText(
            time_text(time.monotonic() - self.run.started_at, fraction, self._run_config.minutes, in_flight)
        )

    def _settings_changed(self) -> None:
        """Say whether Start begins a new run or resumes one, or what is wrong with the settings."""
        if not self.settings.discovering:
            self.resume_hint.setText("Candidates stream into the results browser and the Pareto plot.")
            return
        try:
            key = DiscoveryConfig.from_dict(self.settings.discovery_config(in_flight=2)).key
        except (TesseraError, OSError) as e:
            _set_role(self.resume_hint, "errorText")
            self.resume_hint.setText(f"Not yet: {e}")
            return
        _set_role(self.resume_hint, "hint")
        found = find_run(self.session.store, key)
        if found is None:
            self.resume_hint.setText(f"Start begins a new run. {RESUME_NOTE}")
        else:
            done = stage_counts(self.session.store, found)["proposed"]
            self.resume_hint.setText(
                f"Start resumes run {found.id} ({found.name}): {done} candidate(s) so far, none "
                "proposed or evaluated twice."
            )

    def _mode_changed(self) -> None:
        discovering = self.settings.discovering
        self.start_button.setText("Start discovery" if discovering else "Start search")
        for widget in (self.counts, self.baseline_label, self.best_label, self.references_label, self.time_label):
            widget.setVisible(discovering)
        self._settings_changed()

    def _show_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.settings.setEnabled(not running)

    def _say(self, text: str, error: bool = False) -> None:
        _set_role(self.status, "errorText" if error else "")
        self.status.setText(text)


def _label(role: str = "") -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    _set_role(label, role)
    return label


def _set_role(label: QLabel, role: str) -> None:
    """The label's look from the style sheet (#hint, #errorText), re-applied when it changes."""
    if label.objectName() != role:
        label.setObjectName(role)
        label.style().unpolish(label)
        label.style().polish(label)
