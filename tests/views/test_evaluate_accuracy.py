"""Evaluate Accuracy in the window: for the operator in the editor (Ctrl+Shift+R) and for the
results selected in the Explorer; the dialog refuses bad settings in place, the jobs follow in
the Accuracy dock with their progress and an accuracy curve per epoch, and the accuracy lands
in the results and on the plot."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from core.ir.serialize import read_document
from core.jobs.queue import DONE, QUEUED
from core.store import Store
from tests.support import EXAMPLES

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def type_into(qtbot, box, text: str) -> None:
    box.setFocus()
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), text)
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Tab)


def tiny(qtbot, dialog, epochs: int = 2) -> None:
    """vgg at width 4 on 8-pixel digits, 100 examples, two batches an epoch."""
    form = dialog.proxy
    form.backbone.setCurrentText("vgg")
    for box, text in ((form.width_box, "4"), (form.resolution, "8"), (form.epochs, str(epochs)), (form.limit, "100")):
        type_into(qtbot, box, text)
    type_into(qtbot, form.batches, "2")


def open_dialog(qtbot, window):
    qtbot.keyClick(window, Qt.Key.Key_R, CTRL_SHIFT)
    dialog = window.explore.accuracy.dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


@pytest.mark.slow
def test_the_editors_operator_trains_with_a_growing_curve_and_lands_in_the_results(qtbot, window, tmp_path):
    window.explore.store_path = str(tmp_path / "acc.db")
    window.load(EXAMPLES / "depthwise_separable.json")
    dialog = open_dialog(qtbot, window)
    assert dialog.windowTitle() == "Evaluate Accuracy: depthwise_separable"
    tiny(qtbot, dialog)
    assert not dialog.deployment.isEnabled()  # end-to-end timing only when asked for
    assert dialog.request().rule is not None and not dialog.seeds.isEnabled()  # seeds until the verdict decides
    dialog.until_decided.setChecked(False)  # a fixed count instead
    type_into(qtbot, dialog.seeds, "2")
    qtbot.mouseClick(dialog.evaluate_button, Qt.MouseButton.LeftButton)
    accuracy = window.explore.accuracy
    message = window.statusBar().currentMessage()
    assert accuracy.dock.isVisible() and "proxy training (2 epochs), test accuracy over 2 seeds" in message
    monitor = accuracy.monitor
    job_id, tested = monitor.items
    assert monitor.items[tested].text(1) == "test accuracy over seeds"
    qtbot.waitUntil(lambda: monitor.items[job_id].text(2) == DONE, timeout=120_000)
    job = window.explore.session.jobs[job_id]
    curve = job.result["accuracy_per_epoch"]
    x, y = monitor.curves[job_id].getData()
    assert list(x) == [1, 2] and list(y) == curve  # one point per epoch
    assert monitor.items[job_id].text(4).startswith(f"{curve[-1]:.1%}")
    assert monitor.items[job_id].text(3).startswith("100%")
    qtbot.waitUntil(lambda: monitor.items[tested].text(2) == DONE, timeout=120_000)
    assert "(2 seeds)" in monitor.items[tested].text(4) and "the 95% interval" in monitor.items[tested].text(4)
    monitor.grab().save(str(tmp_path / "accuracy-dock.png"))

    window.show_page("explorer")
    session = window.explore.session
    qtbot.waitUntil(lambda: window.is_idle() and np.isfinite(session.frame.values["accuracy"]).any(), timeout=20_000)
    assert session.frame.values["accuracy"][np.isfinite(session.frame.values["accuracy"])].tolist() == [curve[-1]]
    plot = window.explore.view.plot
    assert plot.y_key == "accuracy" and plot.toolbar.summary.text().startswith("1 results · 1 plotted")


def test_the_status_names_the_editors_operator(qtbot, window, tmp_path):
    window.explore.store_path = str(tmp_path / "acc.db")
    window.explore.actions["autostart"].setChecked(False)
    window.load(EXAMPLES / "depthwise_separable.json")
    dialog = open_dialog(qtbot, window)
    qtbot.mouseClick(dialog.fisher_only, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.evaluate_button, Qt.MouseButton.LeftButton)
    status = window.statusBar().currentMessage()
    assert status.startswith("Queued 1 job(s): ") and status.endswith(" for depthwise_separable"), status
    assert "Subject(" not in status


def test_bad_settings_stay_in_the_dialog(qtbot, window, tmp_path, dialogs):
    window.explore.store_path = str(tmp_path / "acc.db")
    window.load(EXAMPLES / "depthwise_separable.json")
    dialog = open_dialog(qtbot, window)
    dialog.proxy.dataset.setEditText(str(tmp_path / "nowhere"))
    qtbot.mouseClick(dialog.evaluate_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and dialog.error.isVisible()
    assert (
        dialog.error.text()
        == f"{tmp_path / 'nowhere'}: no such file or folder; a dataset is 'fashion-mnist' or 'digits' or "
        "'digits-shifted' (bundled) "
        "or a path: a CIFAR binary folder or file, an .npz archive or an image folder"
    )
    assert window.explore.session.queue.jobs() == [] and dialogs.calls == []
    dialog.reject()


def test_selected_results_are_evaluated_from_the_result_panel(qtbot, store_path, explorer):
    doc = read_document(EXAMPLES / "grouped_conv.json")
    with Store(store_path) as store:
        op = store.add_operator(doc, "grouped_conv", "search:mcts")
        store.add_measurement(op, None, {"latency_ms": 1.0, "flops": 1e6, "bindings": doc["bindings"]})
    view = explorer.explore.view
    qtbot.waitUntil(lambda: view.session.frame.count == 1 and explorer.is_idle(), timeout=20_000)
    view.selection.set(view.session.frame.ids)
    qtbot.mouseClick(view.panel.accuracy_button, Qt.MouseButton.LeftButton)
    dialog = explorer.explore.accuracy.dialog
    assert dialog.windowTitle() == "Evaluate Accuracy: grouped_conv"
    qtbot.mouseClick(dialog.fisher_only, Qt.MouseButton.LeftButton)
    assert not dialog.e2e.isEnabled() and not dialog.proxy.epochs.isEnabled()
    qtbot.mouseClick(dialog.evaluate_button, Qt.MouseButton.LeftButton)
    [job] = explorer.explore.session.queue.jobs()
    assert (job.kind, job.operator_id, job.state) == ("fisher", op, QUEUED)  # workers are off in this window
    status = explorer.statusBar().currentMessage()
    assert status.startswith("Queued 1 job(s): ") and status.endswith(" for grouped_conv")  # the name, not a repr
    assert job.payload["operator"]["bindings"] == doc["bindings"]  # the result's own sizes (its group count)
    monitor = explorer.explore.accuracy.monitor
    assert monitor.items[job.id].text(0) == "grouped_conv" and monitor.items[job.id].text(1) == "Fisher Potential"
