"""The discovery loop (core.search.discovery.run_discovery) off the GUI thread.

The loop only submits jobs and reads the store between short sleeps; the stage jobs
themselves run in the session's worker processes. Its own thread keeps its own store
connection (SQLite connections stay in the thread that opened them), reports the summary
of every round as a signal, and stops when asked: the loop cancels the jobs in flight, and
the next run of the same settings submits them again."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QThread, Signal

from core.errors import TesseraError
from core.search.discovery import run_discovery
from core.search.settings import DiscoveryConfig


class DiscoveryThread(QThread):
    reported = Signal(float, object)  # fraction done, the summary so far (core.search.summary.RunSummary)
    ended = Signal(object, str)  # the final summary (None after an error), the error's message or ""

    def __init__(self, config: DiscoveryConfig, store_path: str, parent=None):
        super().__init__(parent)
        self.config, self.store_path = config, store_path
        self.started_at = time.monotonic()
        self._stop = threading.Event()
        self._fraction = 0.0

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        """Ask the loop to stop at its next round (within about half a second)."""
        self._stop.set()

    def run(self) -> None:
        self.started_at = time.monotonic()
        try:
            summary = run_discovery(
                self.config,
                self.store_path,
                progress=self._progress,
                cancelled=self._stop.is_set,
                report=lambda summary: self.reported.emit(self._fraction, summary),
            )
        except TesseraError as e:
            self.ended.emit(None, str(e))
        except Exception as e:  # the thread's edge: a bug ends the run with its message, not a hung panel
            self.ended.emit(None, f"unexpected {type(e).__name__}: {e}")
        else:
            self.ended.emit(summary, "")

    def _progress(self, fraction: float, message: str) -> None:
        self._fraction = fraction
