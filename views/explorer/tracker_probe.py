"""Whether a device's tracker answers, asked without blocking the window: a TCP connection
attempt (Qt's own socket: no thread, no TVM) with a deadline. Evaluate and Tune ask it before
queueing jobs for an RPC device, so a device that is down is refused at once instead of
jobs sitting at "running 0%" for minutes (a job waits for its device, then tries again)."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtNetwork import QAbstractSocket, QTcpSocket

PROBE_TIMEOUT_S = 3.0


class TrackerProbe(QObject):
    answered = Signal(str)  # "" when the tracker took the connection, else why not (a sentence)

    def __init__(self, host: str, port: int, timeout_s: float = PROBE_TIMEOUT_S, parent=None):
        super().__init__(parent)
        self.where, self.timeout_s = f"{host}:{port}", timeout_s
        self.socket = QTcpSocket(self)
        self.socket.connected.connect(lambda: self._answer(""))
        self.socket.errorOccurred.connect(self._failed)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(round(timeout_s * 1000))
        self.timer.timeout.connect(lambda: self._answer(f"tracker {self.where} did not answer within {timeout_s:g} s"))
        self.timer.start()
        self.socket.connectToHost(host, port)

    def _failed(self, error: QAbstractSocket.SocketError) -> None:
        if error == QAbstractSocket.SocketError.ConnectionRefusedError:
            self._answer(f"tracker {self.where} refused the connection")
        else:
            self._answer(f"cannot reach tracker {self.where}: {self.socket.errorString()}")

    def _answer(self, problem: str) -> None:
        if not self.timer.isActive():  # answered already
            return
        self.timer.stop()
        self.socket.abort()
        self.answered.emit(problem)
