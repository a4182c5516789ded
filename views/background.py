"""A function run in a spawned worker process (core.jobs.isolate.call_in_subprocess)
from a Qt thread pool, so dialogs that export, check a device or build code never block
the window. The answer comes back as a signal in the GUI thread."""

from __future__ import annotations

from PySide6.QtCore import QObject, QRunnable, Signal

from core.errors import TesseraError
from core.jobs.isolate import call_in_subprocess


class CallSignals(QObject):
    ended = Signal(object, str)  # the function's result (or None), the error message (or "")


class SubprocessCall(QRunnable):
    """call_in_subprocess(target, kwargs, timeout=...) on a pool thread; the outcome goes
    to `signals.ended` as (result, "") or (None, the error's message)."""

    def __init__(self, target: str, kwargs: dict, signals: CallSignals, timeout: float):
        super().__init__()
        self.target, self.kwargs, self.signals, self.timeout = target, kwargs, signals, timeout

    def run(self) -> None:
        try:
            result = call_in_subprocess(self.target, self.kwargs, timeout=self.timeout)
        except TesseraError as e:
            self.signals.ended.emit(None, str(e))
            return
        self.signals.ended.emit(result, "")
