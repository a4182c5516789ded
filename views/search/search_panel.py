"""The Search page: the settings (views.search.search_settings) beside the run.

Discover runs the discovery loop in a thread of its own (views.search.discovery_thread); its stage
jobs (Fisher Potential, proxy training, tuned end-to-end timing) run in the session's worker
processes, which start with the run. The stage counts, the progress and the time update
every round. A run is kept in the store under the key of its settings, so starting again
with the same settings resumes it; the panel says which before Start is pressed, and opens with
the settings of the store's last run. What the run says (the original, the verdicts, the best
and its references, the time) is core.search.report's, as `tessera discover` prints it; each
mode keeps its own progress and status.

Propose only queues one "search" job (core.search.driver:search_job) whose candidates land
in the store as it goes, streaming into the results browser and the Pareto plot."""

from __future__ import annotations

import contextlib

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
from core.jobs.queue import CANCELLED, DONE, FAILED, QUEUED, RUNNING
from core.jobs.supervisor import default_worker_count
from core.search.driver import SearchRequest
from core.search.report import ended_text, report, time_text
from core.search.settings import DiscoveryConfig
from core.search.stages import stage_counts
from core.search.summary import RunSummary
from core.store.searches import candidates, find_run, runs

from .discovery_status import StageCounts
from .discovery_thread import DiscoveryThread
from .search_settings import DISCOVER, PROPOSE, SearchSettings

RESUME_NOTE = "Starting again with the same settings resumes a run where it stopped."
ORIGINAL_FIRST = "The original network is trained and tested first; the time limit counts from then."


class SearchPanel(QWidget):
    searchStarted = Signal(int)  # job id of a plain search
    discoveryStarted = Signal()
    discoveryEnded = Signal(object, str)  # the run's summary (None after an error), the error or ""

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.job_id: int | None = None
        self.run: DiscoveryThread | None = None
        # each mode's own progress and status line: (fraction, text, is an error)
        self._shown: dict[str, tuple[float, str, bool]] = {DISCOVER: (0.0, "", False), PROPOSE: (0.0, "", False)}
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
        self._restore_last()
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

    def _restore_last(self) -> None:
        """Open with the settings of the store's last discovery run, so that Start resumes it."""
        found = runs(self.session.store)
        if not found:
            return
        with contextlib.suppress(TesseraError):  # settings this Tessera no longer takes: the defaults stand
            self.settings.restore(DiscoveryConfig.stored(found[-1].config))

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
        self.counts.show_tuned(config.tune)
        resumed = find_run(self.session.store, config.key)
        self.counts.show_counts(stage_counts(candidates(self.session.store, resumed)) if resumed else {})
        for label in (self.baseline_label, self.best_label, self.references_label):
            label.clear()
        self._set_progress(DISCOVER, 0.0)
        self.time_label.setText("Starting…")
        self.run = DiscoveryThread(config, str(self.session.path), self)
        self.run.reported.connect(self._reported)
        self.run.ended.connect(self._ended)
        self.run.start()
        self._show_running(True)
        self._say(f"Resuming run {resumed.id} ({resumed.name})." if resumed else "A new run started.")
        self.resume_hint.setText("Stop keeps what is done: starting again with the same settings resumes this run.")
        self.discoveryStarted.emit()

    def _reported(self, fraction: float, summary: RunSummary) -> None:
        self._set_progress(DISCOVER, fraction)
        self.counts.show_counts(summary.counts)
        said = report(summary)
        self.baseline_label.setText(said.original)
        self.best_label.setText(f"{said.verdicts}\n{said.best}")
        beside = "\n".join(f"• {line}" for line in said.networks)
        self.references_label.setText(f"Beside its references:\n{beside}\n\n{said.headline}" if beside else "")
        self.time_label.setText(time_text(summary))

    def _ended(self, summary: RunSummary | None, error: str) -> None:
        run, self.run = self.run, None
        if run is not None:
            run.wait()
            run.deleteLater()
        self._show_running(False)
        if summary is not None:
            fraction = self._shown[DISCOVER][0] if run is not None and run.stopping else 1.0
            self._reported(fraction, summary)
            self._say(f"{ended_text(summary)} {RESUME_NOTE}", mode=DISCOVER)
        if error:
            self.time_label.clear()
            self._say(f"The run stopped: {error}", error=True, mode=DISCOVER)
        self._settings_changed()
        self.discoveryEnded.emit(summary, error)

    def _start_search(self) -> None:
        try:
            self.job_id = self.session.submit(SearchRequest(self.settings.search_config())).ids[0]
        except (TesseraError, OSError) as e:  # bad settings, or a store that cannot be written
            self._say(f"Cannot start: {e}", error=True)
            return
        self._set_progress(PROPOSE, 0.0)
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
        self._set_progress(PROPOSE, job.progress or 0.0)
        if job.state in (QUEUED, RUNNING):
            self._say(job.message or f"search job {job.id} {job.state}", mode=PROPOSE)
        elif job.state == DONE:
            self._say(f"Search finished: {job.message}", mode=PROPOSE)  # its result's line (core.search.results)
        elif job.state == FAILED:
            self._say(f"Search failed: {job.error}", error=True, mode=PROPOSE)
        elif job.state == CANCELLED:  # what it found stays in the store, and is said
            found = f": {job.message}" if job.message and job.message != "started" else ""
            self._say(f"Search stopped{found}", mode=PROPOSE)
        else:
            self._say(f"Search {job.state}", mode=PROPOSE)

    def _settings_changed(self) -> None:
        """Say whether Start begins a new run or resumes one, or what is wrong with the settings."""
        if not self.settings.discovering:
            self.resume_hint.setText("Candidates stream into the results browser and the Pareto plot.")
            return
        try:
            key = self.settings.discovery_config(in_flight=2).key
        except (TesseraError, OSError) as e:
            _set_role(self.resume_hint, "errorText")
            self.resume_hint.setText(f"Not yet: {e}")
            return
        _set_role(self.resume_hint, "hint")
        found = find_run(self.session.store, key)
        if found is None:
            self.resume_hint.setText(f"Start begins a new run. {ORIGINAL_FIRST} {RESUME_NOTE}")
        elif found.baseline_accuracy is None:
            self.resume_hint.setText(f"Start resumes run {found.id} ({found.name}). {ORIGINAL_FIRST}")
        else:
            done = len(candidates(self.session.store, found))
            self.resume_hint.setText(
                f"Start resumes run {found.id} ({found.name}): {done} candidate(s) so far, none "
                "proposed or evaluated twice."
            )

    def _mode_changed(self) -> None:
        discovering = self.settings.discovering
        self.start_button.setText("Start discovery" if discovering else "Start search")
        for widget in (self.counts, self.baseline_label, self.best_label, self.references_label, self.time_label):
            widget.setVisible(discovering)
        fraction, text, error = self._shown[self._mode]
        self.progress.setValue(int(1000 * fraction))  # each mode's own: never the other's bar
        self._show_status(text, error)
        self._settings_changed()

    @property
    def _mode(self) -> str:
        return DISCOVER if self.settings.discovering else PROPOSE

    def _set_progress(self, mode: str, fraction: float) -> None:
        self._shown[mode] = (fraction, *self._shown[mode][1:])
        if mode == self._mode:
            self.progress.setValue(int(1000 * fraction))

    def _show_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.settings.setEnabled(not running)

    def _say(self, text: str, error: bool = False, mode: str | None = None) -> None:
        """Say `text` as the status of `mode` (the discovery run's, or the one shown when None)."""
        mode = mode or (DISCOVER if self.run is not None else self._mode)
        self._shown[mode] = (self._shown[mode][0], text, error)
        if mode == self._mode:
            self._show_status(text, error)

    def _show_status(self, text: str, error: bool) -> None:
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
