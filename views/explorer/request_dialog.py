"""A dialog that asks how to run something and hands over a request object that core has
checked: OK builds the request (`request()`), emits it and closes, or keeps the dialog open
with the reason under the form."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QLabel

from core.errors import TesseraError


class RequestDialog(QDialog):
    submitted = Signal(object)  # the request, when the user confirms a valid one

    def __init__(self, parent=None):
        super().__init__(parent)
        self.error = QLabel()
        self.error.setObjectName("errorText")
        self.error.setWordWrap(True)
        self.error.hide()

    def request(self):
        """The request the dialog describes; TesseraError names a bad setting."""
        raise NotImplementedError

    def accept(self) -> None:
        try:
            request = self.request()
        except TesseraError as e:
            self.error.setText(str(e))
            self.error.show()
            return
        self.submitted.emit(request)
        super().accept()
