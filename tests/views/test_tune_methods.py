"""The Evaluate / Tune dialog's methods on real widgets: Run > Tune with Reused Schedules…
(transfer jobs on the chosen device, sources checked), and Compare variants (one measure job
per algorithm x tuned/untuned, the left-out algorithm named in the status bar)."""

from __future__ import annotations

import socket

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from core.devices import add_device, set_default
from core.jobs.queue import JobQueue
from core.store import Store
from tests.support import EXAMPLES

pytestmark = pytest.mark.gui


def confirm(qtbot, window) -> None:
    dialog = window.explore.dialog
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: window.explore.dialog is None, timeout=10_000)


def queued_jobs(store_path):
    with Store(store_path) as store:
        return JobQueue(store).jobs()


@pytest.fixture
def tracker():
    """A port that takes connections, where Evaluate and Tune ask an RPC device's tracker
    before queueing (no tracker protocol is spoken: the jobs are only queued)."""
    with socket.create_server(("127.0.0.1", 0)) as listening:
        yield f"127.0.0.1:{listening.getsockname()[1]}"


def test_tune_with_reused_schedules_queues_a_transfer_job(qtbot, store_path, explorer, tmp_path, tracker):
    with Store(store_path) as store:
        add_device(store, "board", tracker, "board")
        set_default(store, "board")
    explorer.show_page("editor")
    explorer.load(EXAMPLES / "conv2d.json")
    explorer.explore.actions["transfer"].trigger()
    dialog = explorer.explore.dialog
    assert dialog.windowTitle() == "Tune" and dialog.transfer and dialog.device.currentData() == "board"
    assert not dialog.trials.isVisibleTo(dialog) and dialog.top_k.isVisibleTo(dialog)
    assert not dialog.variants.isVisibleTo(dialog) and "same class" in dialog.explanation.text()
    dialog.method.setCurrentIndex(0)  # a schedule search
    assert dialog.trials.isVisibleTo(dialog) and not dialog.top_k.isVisibleTo(dialog)
    dialog.method.setCurrentIndex(1)

    dialog.add_source(str(tmp_path / "missing"))
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert (
        dialog.isVisible() and dialog.error.text() == f"{tmp_path / 'missing'}: no such tuning folder or results store"
    )
    dialog.sources.setCurrentRow(0)
    dialog.sources.item(0).setSelected(True)
    dialog._remove_sources()
    dialog.add_source(str(store_path))
    dialog.add_source(str(store_path))  # once only
    dialog.top_k.setValue(3)
    dialog.bindings.setPlainText("C_in=8, C_out=6, H=10, W=6, K=3")
    confirm(qtbot, explorer)

    [job] = queued_jobs(store_path)
    assert job.kind == "transfer" and job.payload["sources"] == [str(store_path)] and job.payload["top_k"] == 3
    assert job.payload["device"] == "board" and job.payload["device_config"]["key"] == "board"
    monitor = explorer.explore.monitor
    qtbot.waitUntil(lambda: monitor.model.rowCount() == 1, timeout=10_000)
    assert monitor.model.data(monitor.model.index(0, 1)) == "transfer · top 3"
    assert job.payload["bindings"]["C_out"] == 6
    assert job.input_key is not None  # the operator in the editor: editing it cancels the job
    assert "Queued 1 job(s): tune with reused schedules conv2d" in explorer.statusBar().currentMessage()


def test_compare_variants_queues_every_algorithm_and_names_what_was_left_out(qtbot, store_path, explorer):
    explorer.show_page("editor")
    explorer.load(EXAMPLES / "grouped_conv.json")
    explorer.explore.actions["tune"].trigger()
    dialog = explorer.explore.dialog
    assert "untuned and tuned" in dialog.variants.text()
    dialog.variants.setChecked(True)
    dialog.trials.setValue(3)
    confirm(qtbot, explorer)
    jobs = queued_jobs(store_path)
    algorithms = ("default", "gspc", "nchwc", "im2col", "winograd")
    assert [(j.kind, j.payload["algorithm"], j.payload["tune_trials"]) for j in jobs] == [
        ("measure", a, n) for a in algorithms for n in (0, 3)
    ]
    assert "Queued 10 job(s): tune (3 trials), comparing variants grouped_conv" in explorer.statusBar().currentMessage()
    monitor = explorer.explore.monitor  # the job monitor tells the variants apart
    qtbot.waitUntil(lambda: monitor.model.rowCount() == 10, timeout=10_000)
    shown = {monitor.model.data(monitor.model.index(r, 1)) for r in range(10)}
    assert {"measure", "measure · tune 3", "measure · gspc", "measure · gspc · tune 3", "measure · winograd"} <= shown

    explorer.load(EXAMPLES / "involution.json")
    explorer.explore.actions["evaluate"].trigger()
    dialog = explorer.explore.dialog
    assert not dialog.method.isVisibleTo(dialog) and dialog.variants.isVisibleTo(dialog)
    dialog.variants.setChecked(True)
    confirm(qtbot, explorer)
    jobs = queued_jobs(store_path)[10:]
    assert [(j.payload["algorithm"], j.payload["tune_trials"]) for j in jobs] == [("default", 0)]
    message = explorer.statusBar().currentMessage()
    assert (
        "Queued 1 job(s)" in message
        and "left out: involution: algorithm 'gspc' runs grouped convolutions only" in message
    )


def test_variants_view_compares_one_operator_device_and_sizes(qtbot, store_path, explorer, dialogs, tmp_path):
    from tests.core.variants_data import add_variants
    from tests.support import EXAMPLES as examples_dir

    from .test_explorer import wait_for_results

    ids = add_variants(store_path, examples_dir)
    wait_for_results(qtbot, explorer, 6)
    view = explorer.explore.view
    view.selection.set([ids[3]])
    view.browser.buttons["variants"].click()
    dialog = view.variants_dialog
    assert dialog is not None and dialog.isVisible() and dialog.windowTitle() == "Variants of grouped_conv"
    table = dialog.table
    labels = [table.item(r, 1).text() for r in range(table.rowCount())]
    assert labels == ["gspc · tuned (8 trials)", "default · reused schedule", "gspc · untuned", "default · untuned"]
    assert [table.item(r, 8).text() for r in range(4)] == ["4.00x", "2.00x", "1.33x", "1.00x"]
    assert table.item(2, 0).font().bold() and not table.item(0, 0).font().bold()  # opened from ids[3]
    ticks = dialog.chart.getPlotItem().getAxis("left")._tickLevels[0]
    assert next(text for _, text in ticks) == "gspc · tuned (8 trials) · NCHW4c"
    table.selectRow(0)
    assert view.selection.current == ids[1]  # the explorer follows
    dialog.grab().save(str(tmp_path / "variants.png"))

    view.show_variants(-1)  # an operator never measured
    assert dialogs.calls[-1][:2] == ("information", "No variants yet")
    dialog.close()
    qtbot.waitUntil(lambda: view.variants_dialog is None)


def test_a_search_candidate_never_measured_opens_and_measures_at_its_own_sizes(qtbot, store_path, explorer):
    """The store keeps the bindings a candidate was saved with (its sampler's solved sizes)."""
    from core.ir.serialize import read_document

    from .test_explorer import wait_for_results

    doc = read_document(EXAMPLES / "grouped_conv.json")
    sizes = {"C_in": 8, "C_out": 16, "H": 12, "W": 12, "K": 3, "G": 2}
    with Store(store_path) as store:
        op = store.add_operator({**doc, "bindings": sizes}, "mcts-candidate", "search:mcts")
    wait_for_results(qtbot, explorer, 1)
    view = explorer.explore.view
    view.selection.set([-op])
    view.browser.buttons["evaluate"].click()
    dialog = explorer.explore.dialog
    assert dialog.own.isVisibleTo(dialog) and dialog.own.isChecked()
    confirm(qtbot, explorer)
    [job] = queued_jobs(store_path)
    assert job.payload["bindings"] == sizes and job.operator_name == "mcts-candidate"

    explorer.explore.open_result(-op)
    assert explorer.pages.current == "editor" and explorer.document.bindings == sizes
    assert explorer.document.summary.shapes.ok
