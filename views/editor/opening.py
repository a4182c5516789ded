"""Opening a large operator file with a progress dialog, the window kept painting: reading,
checking and laying out the graph run in a thread (Qt-free, views.editor.document
.read_operator_file), then the canvas makes its cards and wires, reporting as it goes
(OperatorScene.building). A 10,000-node chain takes seconds either way; a small file opens
at once, without a dialog."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import QEventLoop, Qt
from PySide6.QtWidgets import QApplication, QProgressDialog, QWidget

from .canvas import OperatorScene
from .document import OperatorDocument, read_operator_file

#: files from this size (bytes; about 2,000 nodes) open with a progress dialog
LARGE_FILE = 256 * 1024
#: how often, at most, the window repaints while a thread reads the file, s
PAINT_EVERY = 0.05


class Opening:
    """The progress of opening one large file (see opening_progress)."""

    def __init__(self, dialog: QProgressDialog, path: Path, parent: QWidget):
        self.dialog, self.path, self.parent = dialog, path, parent

    def document(self) -> OperatorDocument:
        """The file read in a thread while the window keeps painting; FormatError as for
        OperatorDocument.open."""
        answer: dict = {}

        def read() -> None:
            try:
                answer["read"] = read_operator_file(self.path)
            except BaseException as e:  # raised again below, on the GUI thread
                answer["error"] = e

        thread = threading.Thread(target=read, name=f"reading {self.path.name}", daemon=True)
        thread.start()
        while thread.is_alive():
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, int(PAINT_EVERY * 1000))
            thread.join(PAINT_EVERY)
        if "error" in answer:
            raise answer["error"]
        graph, path, summary = answer["read"]
        self.dialog.setLabelText(f"Opening {self.path.name}: drawing {graph.g.number_of_nodes():,} cards")
        return OperatorDocument(graph, path, self.parent, summary)

    def built(self, done: int, total: int) -> None:
        """OperatorScene.building: the dialog shows it (a modal dialog's setValue repaints the window)."""
        self.dialog.setMaximum(total)
        self.dialog.setValue(done)


@contextlib.contextmanager
def opening_progress(parent: QWidget, path: str | Path, scene: OperatorScene) -> Iterator[Opening | None]:
    """For a large file: a progress dialog over `parent` while it is read (Opening.document)
    and while `scene` draws it; None (nothing shown) for a small one."""
    path = Path(path)
    try:
        large = path.stat().st_size >= LARGE_FILE
    except OSError:
        large = False  # reading it says what is wrong
    if not large:
        yield None
        return
    dialog = QProgressDialog(f"Opening {path.name}: reading and checking it", "", 0, 0, parent)
    dialog.setWindowTitle("Opening an operator")
    dialog.setCancelButton(None)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setValue(0)
    opening = Opening(dialog, path, parent)
    scene.building.connect(opening.built)
    try:
        yield opening
    finally:
        scene.building.disconnect(opening.built)
        dialog.close()
        dialog.deleteLater()
