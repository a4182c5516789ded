"""A large operator file (here 3,000 nodes, written without positions as programs write them)
opens with a progress dialog while the window keeps handling events, laid out rather than
stacked, so the editor draws only the cards in view."""

from __future__ import annotations

import json

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QProgressDialog

from tests.support import relu_chain_document
from views.editor import canvas_items
from views.editor.opening import LARGE_FILE

NODES = 3000


def test_a_large_file_opens_with_progress_laid_out_and_drawn_in_part(window, qtbot, tmp_path, monkeypatch):
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(relu_chain_document(NODES)))
    assert path.stat().st_size >= LARGE_FILE
    seen, ticks, painted = [], [], []
    window.scene.building.connect(lambda done, total: seen.append((done, total)))
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(window.findChild(QProgressDialog)))
    timer.start(20)
    paint = canvas_items.NodeItem.paint
    monkeypatch.setattr(canvas_items.NodeItem, "paint", lambda item, *a: painted.append(item) or paint(item, *a))

    window.load(path)
    timer.stop()
    total = (NODES + 2) + (NODES + 1)  # cards and wires
    assert seen[-1] == (total - total % 250, total) and len(seen) == total // 250
    dialogs = [d for d in ticks if d is not None]
    assert dialogs, "the window handled no event while it read the file"  # responsive, and the dialog showed
    assert "chain.json" in dialogs[0].labelText()
    assert window.findChild(QProgressDialog) is None or not window.findChild(QProgressDialog).isVisible()

    rect = window.scene.nodes_rect()
    assert rect.width() > 20 * 170 and rect.height() > 10 * 120  # laid out, not stacked at one place
    painted.clear()
    window.view.viewport().repaint()
    assert 0 < len(painted) < 200  # the cards in view, not all 3,002
