"""The code panel: the operator as PyTorch and TVMScript source, generated in a
spawned worker process (core.jobs.isolate) driven from a QThreadPool, so the
GUI thread never waits and never imports torch or TVM. Only the newest request
is shown; a superseded job is cancelled at its next progress point."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTabWidget, QVBoxLayout, QWidget

from core.errors import TesseraError
from core.jobs.isolate import call_in_subprocess

from .. import theme
from .highlighter import PythonHighlighter

WORKER = "views.editor.code_worker:generate"
LANGUAGES = (("pytorch", "PyTorch"), ("tvmscript", "TVMScript"))
DEBOUNCE_MS = 400
TIMEOUT_S = 300


class _Cancelled(Exception):
    pass


class _Signals(QObject):
    ended = Signal(int, object, str)  # generation, {language: {...}} or None, error message or ""


class _CodeJob(QRunnable):
    def __init__(self, generation: int, request: dict, signals: _Signals):
        super().__init__()
        self.generation, self.request, self.signals = generation, request, signals
        self.cancelled = threading.Event()

    def _progress(self, fraction: float, message: str) -> None:
        if self.cancelled.is_set():
            raise _Cancelled()  # unwinds call_in_subprocess, which kills the worker process

    def run(self) -> None:
        result, error = None, ""
        try:
            result = call_in_subprocess(WORKER, self.request, on_progress=self._progress, timeout=TIMEOUT_S)
        except _Cancelled:
            pass
        except TesseraError as e:
            error = str(e)
        self.signals.ended.emit(self.generation, result, error)


class CodePanel(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.editors: dict[str, QPlainTextEdit] = {}
        for key, title in LANGUAGES:
            editor = QPlainTextEdit()
            editor.setReadOnly(True)
            editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            editor.setFont(theme.mono_font(9))
            PythonHighlighter(editor.document())
            self.editors[key] = editor
            self.tabs.addTab(editor, title)
        self.status = QLabel()
        self.status.setObjectName("hint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.setSpacing(2)
        layout.addWidget(self.tabs)
        layout.addWidget(self.status)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _Signals(self)
        self._signals.ended.connect(self._ended)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start)
        self._active = False
        self._request: dict | None = None
        self._generation = 0
        self._shown = 0
        self._job: _CodeJob | None = None
        self._notice("Open the Code panel to generate source.")

    # requests ---------------------------------------------------------------------
    def set_active(self, active: bool) -> None:
        """Generate only while the panel can be seen."""
        self._active = active
        if active and self._request is not None and self._shown != self._generation:
            self._timer.start()

    def request(self, document: dict | None, bindings: dict[str, int], reason: str = "") -> None:
        """Ask for code of `document`; None with a `reason` when the operator cannot be generated yet."""
        self._generation += 1
        if document is None:
            self._request = None
            self._timer.stop()
            self._cancel_running()
            self._shown = self._generation
            self._notice(reason)
            return
        self._request = {"document": document, "bindings": dict(bindings)}
        for editor in self.editors.values():  # shown only where there is no older code to keep showing
            editor.setPlaceholderText("Generating code…")
        self.status.setText("Out of date: regenerating…")
        if self._active:
            self._timer.start()

    def is_idle(self) -> bool:
        return not self._timer.isActive() and self._job is None

    def shutdown(self) -> None:
        """Stop timers and jobs before the window goes away."""
        self._timer.stop()
        self._request = None
        self._cancel_running()
        self._pool.waitForDone()
        self._job = None

    # jobs ---------------------------------------------------------------------------
    def _start(self) -> None:
        if self._request is None:
            return
        if self._job is not None:  # one worker at a time: cancel it, start again when it returns
            self._job.cancelled.set()
            return
        self._job = _CodeJob(self._generation, self._request, self._signals)
        self.status.setText("Generating code in a worker process…")
        self._pool.start(self._job)

    def _cancel_running(self) -> None:
        if self._job is not None:
            self._job.cancelled.set()

    def _ended(self, generation: int, result: dict | None, error: str) -> None:
        self._job = None
        if generation == self._generation and (result is not None or error):
            self._shown = generation
            if error:
                self._notice(f"Code generation failed: {error}")
            elif result is not None:
                self._show(result)
        if self._request is not None and self._shown != self._generation and self._active:
            self._start()

    def _show(self, result: dict) -> None:
        for key, title in LANGUAGES:
            answer = result.get(key, {})
            editor = self.editors[key]
            if "source" in answer:
                editor.setPlainText(answer["source"])
            else:
                editor.clear()
                editor.setPlaceholderText(f"{title}: {answer.get('error', 'no answer')}")
        missing = [title for key, title in LANGUAGES if "source" not in result.get(key, {})]
        self.status.setText(f"No {' or '.join(missing)} source; the tab says why." if missing else "Up to date.")

    def _notice(self, text: str) -> None:
        for editor in self.editors.values():
            editor.clear()
            editor.setPlaceholderText(text)
        self.status.setText(text)
