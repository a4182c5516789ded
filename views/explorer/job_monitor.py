"""The job monitor: every job with its kind, operator, device, where it runs (a local
worker process or a Ray node), state, progress, elapsed time and error, with Cancel and
Retry; and the status-bar summary ("3 running, 12 queued").

It only displays the session's job list, which the reader thread keeps current; the
buttons go through the session to core.jobs.JobQueue."""

from __future__ import annotations

import time

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import TesseraError
from core.jobs.countdown import Countdown
from core.jobs.queue import CANCELLED, DONE, FAILED, QUEUED, RUNNING, Job, duration_text

from .. import theme
from .record_table import list_records
from .session import ExplorerSession


def state_color(state: str) -> str:
    """A job state's colour in the current scheme (views.theme)."""
    return {
        QUEUED: theme.SEVERITY_COLORS["info"],
        RUNNING: theme.SELECTION,
        DONE: theme.ACCEPT,
        FAILED: theme.SEVERITY_COLORS["error"],
        CANCELLED: theme.SEVERITY_COLORS["warning"],
    }[state]


HEADERS = ("#", "Kind", "Operator", "Device", "Where", "State", "Progress", "Elapsed", "Tries", "Message")
PROGRESS, ELAPSED = HEADERS.index("Progress"), HEADERS.index("Elapsed")
JOB_ROLE = Qt.ItemDataRole.UserRole


def elapsed_text(job: Job, now: float, left: float | None = None) -> str:
    """'1:05' finished, '1:05, about 0:40 left' running (`left`: its time left, None while it is
    not known: '1:05, estimating...'); 'waiting 12 s' while queued. Running time only: an
    attempt taken up again counts from its start."""
    if job.state == QUEUED:
        return f"waiting {duration_text(now - (job.created or now))}"
    if job.started is None:
        return "—"
    if job.state != RUNNING:
        return duration_text((job.finished or now) - job.started)
    return duration_text(now - job.started) + (
        ", estimating..." if left is None else f", about {duration_text(left)} left"
    )


def kind_label(kind: str, payload: dict) -> str:
    """'measure', 'measure · gspc · tune 16', 'transfer · top 3': what tells variants apart."""
    parts = [kind]
    if payload.get("algorithm", "default") != "default":
        parts.append(str(payload["algorithm"]))
    if payload.get("tune_trials"):
        parts.append(f"tune {payload['tune_trials']}")
    if (payload.get("top_k") or 1) > 1:
        parts.append(f"top {payload['top_k']}")
    return " · ".join(parts)


class JobsModel(QAbstractTableModel):
    """Jobs newest first; finished ones can be hidden."""

    def __init__(self, session: ExplorerSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.ids: list[int] = []
        self.hide_finished = False
        self.countdown = Countdown()
        session.jobsChanged.connect(self.refresh)
        session.ticked.connect(self._tick)
        self.refresh()

    def refresh(self) -> None:
        jobs = self.session.jobs
        ids = sorted(
            (i for i, j in jobs.items() if not (self.hide_finished and j.state in (DONE, CANCELLED))), reverse=True
        )
        new = len(ids) - len(self.ids)
        if new >= 0 and ids[new:] == self.ids:
            if new:
                self.beginInsertRows(QModelIndex(), 0, new - 1)
                self.ids = ids
                self.endInsertRows()
            if self.ids:
                self.dataChanged.emit(self.index(0, 0), self.index(len(self.ids) - 1, len(HEADERS) - 1))
            return
        self.beginResetModel()
        self.ids = ids
        self.endResetModel()

    def _tick(self) -> None:
        running = [row for row, i in enumerate(self.ids) if self.session.jobs[i].state in (RUNNING, QUEUED)]
        if running:
            self.dataChanged.emit(self.index(running[0], ELAPSED), self.index(running[-1], ELAPSED))

    def job(self, row: int) -> Job:
        return self.session.jobs[self.ids[row]]

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.ids)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        job = self.job(index.row())
        column = index.column()
        if role == JOB_ROLE:
            return job
        if role == Qt.ItemDataRole.DecorationRole and column == HEADERS.index("State"):
            return theme.dot_icon(state_color(job.state))
        if role == Qt.ItemDataRole.ForegroundRole and column == HEADERS.index("Message") and job.state == FAILED:
            return QColor(state_color(FAILED))
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (0, ELAPSED, HEADERS.index("Tries")):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        payload = job.payload
        now = time.time()
        device = self.session.devices.get(job.device_id) if job.device_id is not None else None
        values = (
            str(job.id),
            kind_label(job.kind, payload),
            job.operator_name or "—",
            device or payload.get("device") or "—",
            job.runs_on or "—",
            job.state,
            f"{round(100 * (job.progress or 0))}%",
            elapsed_text(job, now, self.countdown.left(job, now)),
            f"{job.attempts}/{job.max_attempts}",
            job.error if job.state in (FAILED, CANCELLED) and job.error else (job.message or ""),
        )
        if role == Qt.ItemDataRole.ToolTipRole:
            bindings = ", ".join(f"{k}={v}" for k, v in (payload.get("bindings") or {}).items())
            return f"{job.describe()}\nbindings: {bindings or '—'}\n{values[-1]}".strip()
        return values[column]


class ProgressDelegate(QStyledItemDelegate):
    """A thin rounded bar in the state's colour with the percentage beside it."""

    def paint(self, painter: QPainter, option, index: QModelIndex | QPersistentModelIndex) -> None:
        job: Job = index.data(JOB_ROLE)
        self.initStyleOption(option, index)
        option.text = ""
        option.widget.style().drawControl(
            option.widget.style().ControlElement.CE_ItemViewItem, option, painter, option.widget
        )
        rect = QRectF(option.rect).adjusted(6, 0, -44, 0)
        bar = QRectF(rect.left(), rect.center().y() - 3, max(rect.width(), 0), 6)
        fraction = 1.0 if job.state == DONE else min(max(job.progress or 0.0, 0.0), 1.0)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        track = QPainterPath()
        track.addRoundedRect(bar, 3, 3)
        painter.fillPath(track, QColor(255, 255, 255, 90) if selected else QColor(theme.COLORS["track"]))
        if fraction > 0:
            filled = QPainterPath()
            filled.addRoundedRect(QRectF(bar.left(), bar.top(), bar.width() * fraction, bar.height()), 3, 3)
            painter.fillPath(filled, QColor("#ffffff") if selected else QColor(state_color(job.state)))
        painter.setPen(option.palette.highlightedText().color() if selected else QColor(theme.TEXT_MUTED))
        painter.drawText(
            QRectF(rect.right() + 4, option.rect.top(), 40, option.rect.height()),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
            f"{round(100 * fraction)}%",
        )
        painter.restore()


class JobMonitor(QWidget):
    def __init__(self, session: ExplorerSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.model = JobsModel(session, self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setItemDelegateForColumn(PROGRESS, ProgressDelegate(self.table))
        list_records(self.table, several=True, row_height=24)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        widths = {
            "#": 48,
            "Kind": 130,
            "Operator": 170,
            "Device": 70,
            "Where": 170,
            "State": 90,
            "Progress": 150,
            "Elapsed": 175,  # "1:27, about 1:58 left"
            "Tries": 50,
        }
        for title, width in widths.items():
            self.table.setColumnWidth(HEADERS.index(title), width)

        self.summary = QLabel()
        self.summary.setObjectName("barLabel")
        self.hide_finished = QCheckBox("Hide finished")
        self.hide_finished.toggled.connect(self._hide_finished)
        self.workers_label = QLabel()
        self.workers_label.setObjectName("hint")
        self.workers_button = QPushButton()
        self.workers_button.clicked.connect(self._toggle_workers)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Cancel the selected queued or running jobs")
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setToolTip("Queue the selected failed or cancelled jobs again")
        self.retry_button.clicked.connect(self.retry_selected)

        top = QHBoxLayout()
        top.setContentsMargins(8, 6, 8, 0)
        top.addWidget(self.summary)
        top.addStretch(1)
        top.addWidget(self.hide_finished)
        top.addSpacing(12)
        top.addWidget(self.workers_label)
        top.addWidget(self.workers_button)
        top.addSpacing(12)
        top.addWidget(self.cancel_button)
        top.addWidget(self.retry_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)

        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        session.jobsChanged.connect(self._update)
        session.workersChanged.connect(lambda _: self._update())
        self._update()

    def selected_jobs(self) -> list[Job]:
        return [self.model.job(i.row()) for i in self.table.selectionModel().selectedRows()]

    def cancel_selected(self) -> None:
        ids = [j.id for j in self.selected_jobs() if j.state in (QUEUED, RUNNING)]
        self.session.cancel(ids)

    def retry_selected(self) -> None:
        try:
            self.session.retry([j.id for j in self.selected_jobs() if j.state in (FAILED, CANCELLED)])
        except TesseraError as e:  # it changed state in the meantime
            self.session.message.emit(str(e))

    def _hide_finished(self, on: bool) -> None:
        self.model.hide_finished = on
        self.model.refresh()

    def _toggle_workers(self) -> None:
        if self.session.workers_running:
            self.session.stop_workers()
        else:
            self.session.start_workers()

    def _update(self) -> None:
        self.summary.setText(summary_text(self.session))
        supervisor = self.session.supervisor
        running = supervisor is not None
        count = supervisor.count if supervisor is not None else 0
        self.workers_label.setText(
            f"{count} worker process{'es' if count != 1 else ''}" if running else "workers stopped"
        )
        self.workers_button.setText("Stop Workers" if running else "Start Workers")
        self._update_buttons()

    def _update_buttons(self) -> None:
        states = {j.state for j in self.selected_jobs()}
        self.cancel_button.setEnabled(bool(states & {QUEUED, RUNNING}))
        self.retry_button.setEnabled(bool(states & {FAILED, CANCELLED}))


def summary_text(session: ExplorerSession) -> str:
    running, queued = session.job_summary()
    if not running and not queued:
        return "No jobs running"
    return f"{running} running, {queued} queued"


class JobsIndicator(QToolButton):
    """The status bar's job summary; clicking it shows the job monitor."""

    activated = Signal()

    def __init__(self, session: ExplorerSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setToolTip("Show the job monitor")
        self.clicked.connect(self.activated)
        session.jobsChanged.connect(self._update)
        self._update()

    def _update(self) -> None:
        running, queued = self.session.job_summary()
        self.setText(summary_text(self.session))
        self.setIcon(
            theme.dot_icon(state_color(RUNNING) if running else state_color(QUEUED) if queued else theme.CARD_BORDER)
        )
