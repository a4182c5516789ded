"""The Explore side on real widgets offscreen, over real SQLite stores: the Pareto plot,
the paged results browser, selection between them, the job monitor, Evaluate/Tune
requests and the stale-job rule. Results are written through core.store.Store from
a second connection, the way worker processes write them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

from core.ir.bindings import parse_bindings
from core.ir.serialize import content_hash, read_document, to_document
from core.jobs.queue import CANCELLED, QUEUED, JobQueue
from core.store import Store
from views.explorer.job_monitor import HEADERS
from views.result_columns import COLUMNS
from views.theme import RESOURCES

from .helpers import LEFT, NO_BUTTON, mouse, type_bindings

pytestmark = pytest.mark.gui
EXAMPLES = RESOURCES / "examples"
#: example operator files standing in for results of each origin
ORIGINS = {
    "hand-made": "conv2d.json",
    "search:canvas": "depthwise_separable.json",
    "search:mcts": "grouped_conv.json",
    "baseline": "shift_conv.json",
}
SHIFT = Qt.KeyboardModifier.ShiftModifier


# -- fixtures and helpers ---------------------------------------------------------------
def add_results(path, values, origin="hand-made", bindings=None) -> list[int]:
    """Measurements (latency ms, FLOPs) of the example standing for `origin`, written in one
    transaction through a connection of their own; returns their ids."""
    with Store(path) as store:
        operator = store.add_operator(read_document(EXAMPLES / ORIGINS[origin]), ORIGINS[origin][:-5], origin)
        device = store.add_device("local", "local")
        with store.write():
            return [
                store.add_measurement(
                    operator,
                    device,
                    {"latency_ms": float(latency), "flops": float(flops), "bindings": bindings or {"C_in": 8}},
                )
                for latency, flops in values
            ]


def random_values(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.lognormal(0.0, 0.6, n), rng.lognormal(18.0, 0.6, n)])


def wait_for_results(qtbot, window, count: int) -> None:
    view = window.explore.view
    qtbot.waitUntil(
        lambda: view.session.frame.count == count and view.browser.model.rowCount() == count and window.is_idle(),
        timeout=20_000,
    )


def viewport_point(plot, result_id: int) -> QPoint:
    scene = plot.scene_position(result_id)
    assert scene is not None, f"result {result_id} is not plotted"
    return plot.plot.mapFromScene(scene)


def click(widget, pos: QPoint, modifiers=Qt.KeyboardModifier.NoModifier, double=False) -> None:
    mouse(widget, QEvent.Type.MouseButtonPress, pos, modifiers=modifiers)
    mouse(widget, QEvent.Type.MouseButtonRelease, pos, LEFT, NO_BUTTON, modifiers)
    if double:
        mouse(widget, QEvent.Type.MouseButtonDblClick, pos, modifiers=modifiers)
        mouse(widget, QEvent.Type.MouseButtonRelease, pos, LEFT, NO_BUTTON, modifiers)


def drag(widget, start: QPoint, end: QPoint, modifiers, steps: int = 8) -> None:
    mouse(widget, QEvent.Type.MouseButtonPress, start, modifiers=modifiers)
    for i in range(1, steps + 1):
        p = start + (end - start) * (i / steps)
        mouse(widget, QEvent.Type.MouseMove, QPoint(round(p.x()), round(p.y())), NO_BUTTON, LEFT, modifiers)
    mouse(widget, QEvent.Type.MouseButtonRelease, end, LEFT, NO_BUTTON, modifiers)


def wheel(widget, pos: QPoint, steps: int) -> None:
    event = QWheelEvent(
        QPointF(pos),
        QPointF(widget.mapToGlobal(pos)),
        QPoint(0, 0),
        QPoint(0, 120 * steps),
        NO_BUTTON,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


# -- the plot -------------------------------------------------------------------------------
def test_plot_shows_every_result_and_the_front(qtbot, store_path, explorer):
    values = {origin: random_values(60, seed) for seed, origin in enumerate(ORIGINS)}
    for origin, v in values.items():
        add_results(store_path, v, origin)
    wait_for_results(qtbot, explorer, 240)
    plot = explorer.explore.view.plot
    plot.set_axes("latency_ms", "flops", True, True)
    assert plot.toolbar.summary.text().startswith("240 results · 240 plotted")
    with Store(store_path) as store:
        expected = sorted(int(r["measurement_id"]) for r in store.pareto(["latency_ms", "flops"]))
    front_ids = sorted(plot.session.frame.ids[plot._front].tolist())
    assert front_ids == expected
    x, _y = plot.front_line.getData()
    assert len(x) == 2 * len(expected) - 1  # a staircase: one corner between neighbours
    chips = {o: b.text() for o, b in plot.toolbar.chips.items()}
    assert chips == {o: f"{o} 60" for o in ORIGINS}
    # hiding an origin takes its points off the plot and out of the front
    plot.toolbar.chips["hand-made"].click()
    assert plot.toolbar.summary.text().startswith("240 results · 180 plotted")
    codes = plot.session.frame.origin_codes[plot._front]
    assert plot.session.frame.origins.index("hand-made") not in codes


def test_live_results_extend_the_plot_without_resetting_the_zoom(qtbot, store_path, explorer):
    add_results(store_path, random_values(300))
    wait_for_results(qtbot, explorer, 300)
    plot = explorer.explore.view.plot
    centre = plot.plot.viewport().rect().center()
    wheel(plot.plot.viewport(), centre, 3)  # the user zooms in
    zoomed = plot.viewbox.viewRange()
    assert zoomed[0][1] - zoomed[0][0] < plot.markers.full_bounds[0][1] - plot.markers.full_bounds[0][0]

    (x0, x1), (y0, y1) = zoomed
    inside = (10 ** ((x0 + x1) / 2), 10 ** ((y0 + y1) / 2))
    best = (float(plot.session.frame.values["latency_ms"].min()) / 10, 1e3)  # faster and cheaper than all
    new_ids = add_results(store_path, [inside, best])
    wait_for_results(qtbot, explorer, 302)
    assert plot.viewbox.viewRange() == zoomed
    assert viewport_point(plot, new_ids[0]) is not None  # drawn where the user is looking
    assert plot.session.frame.ids[plot._front].tolist() == [new_ids[1]]
    table = explorer.explore.view.browser.model
    assert [table.id_at(0), table.id_at(1)] == new_ids[::-1]  # newest first


def test_hover_click_and_double_click_a_point(qtbot, store_path, explorer):
    ids = add_results(store_path, random_values(50), bindings={"C_in": 8, "C_out": 8, "H": 16, "W": 16, "K": 3})
    wait_for_results(qtbot, explorer, 50)
    view = explorer.explore.view
    plot, viewport = view.plot, view.plot.plot.viewport()
    target = ids[17]
    pos = viewport_point(plot, target)
    mouse(viewport, QEvent.Type.MouseMove, pos, NO_BUTTON, NO_BUTTON)
    assert plot.card.result_id == target and plot.card.label.isVisible()
    latency = Store(store_path).results("measurement_id = ?", [target]).__next__()["latency_ms"]
    assert "conv2d" in plot.card.label.textItem.toPlainText()
    assert f"{latency:.4g}" in plot.card.label.textItem.toPlainText()

    click(viewport, pos)
    assert view.selection.ids.tolist() == [target] and view.selection.current == target
    rows = view.browser.table.selectionModel().selectedRows()
    assert [view.browser.model.id_at(i.row()) for i in rows] == [target]
    assert view.panel.title.text() == "conv2d"

    click(viewport, pos, double=True)
    qtbot.waitUntil(lambda: explorer.pages.current == "editor")
    assert content_hash(to_document(explorer.document.graph)) == content_hash(read_document(EXAMPLES / "conv2d.json"))
    assert explorer.document.bindings == {"C_in": 8, "C_out": 8, "H": 16, "W": 16, "K": 3}
    assert explorer.pages.current == "editor"


def test_convergence_of_a_tuned_result(qtbot, store_path, explorer):
    trials = [[0, 3.0], [1, 2.5], [2, 4.0], [3, 1.25], [5, 1.5]]  # trial 4 failed to build
    with Store(store_path) as store:
        operator = store.add_operator(read_document(EXAMPLES / "conv2d.json"), "conv2d")
        untuned = store.add_measurement(operator, None, {"latency_ms": 3.1, "flops": 1e6})
        tuned = store.add_measurement(
            operator, None, {"latency_ms": 1.2, "flops": 1e6, "tuned": True, "trials": trials}
        )
    wait_for_results(qtbot, explorer, 2)
    view = explorer.explore.view
    assert view.panel.title.text() == "Pareto front" and view.panel.front_list.topLevelItemCount() == 1
    view.selection.set([tuned])
    convergence = view.panel.convergence
    assert convergence.trial_count == 5 and convergence.plot.isVisible()
    x, best = convergence.best.getData()
    assert best[-1] == pytest.approx(np.log10(1.25)) and list(x[:3]) == [0, 1, 1]  # a staircase, log y
    assert convergence.measured.isVisible() and convergence.measured.value() == pytest.approx(np.log10(1.2))
    assert view.panel.values["trial_count"].text() == "5"
    view.selection.set([untuned])
    assert convergence.trial_count == 0 and "Not tuned" in convergence.note.text()


def test_rubber_band_selects_points_and_the_table_follows(qtbot, store_path, explorer):
    add_results(store_path, random_values(200))
    wait_for_results(qtbot, explorer, 200)
    view = explorer.explore.view
    plot, viewport = view.plot, view.plot.plot.viewport()
    box = plot.viewbox.sceneBoundingRect()
    start = plot.plot.mapFromScene(box.topLeft() + QPointF(box.width() * 0.3, box.height() * 0.3))
    end = plot.plot.mapFromScene(box.topLeft() + QPointF(box.width() * 0.7, box.height() * 0.8))
    drag(viewport, start, end, SHIFT)
    a, b = (plot.viewbox.mapSceneToView(plot.plot.mapToScene(p)) for p in (start, end))
    frame = plot.session.frame
    x, y = np.log10(frame.values["latency_ms"]), np.log10(frame.values["flops"])
    inside = (x >= min(a.x(), b.x())) & (x <= max(a.x(), b.x())) & (y >= min(a.y(), b.y())) & (y <= max(a.y(), b.y()))
    expected = sorted(frame.ids[inside].tolist())
    assert len(expected) > 5 and view.selection.ids.tolist() == expected
    selected = sorted(view.browser.model.id_at(i.row()) for i in view.browser.table.selectionModel().selectedRows())
    assert selected == expected
    assert sorted(plot.selected_markers.data["data"].tolist()) == expected
    # and the other way: selecting table rows highlights them on the plot
    view.browser.table.selectRow(3)
    assert plot.selected_markers.data["data"].tolist() == [view.browser.model.id_at(3)]
    view.browser.only_selected.setChecked(True)
    qtbot.waitUntil(lambda: not view.browser.model.pending and view.browser.model.rowCount() == 1)


# -- the results browser ----------------------------------------------------------------------
def test_results_table_pages_a_large_store(qtbot, store_path, explorer):
    values = random_values(12_000, seed=3)
    add_results(store_path, values[:6000], "hand-made")
    add_results(store_path, values[6000:], "search:canvas")
    wait_for_results(qtbot, explorer, 12_000)
    browser = explorer.explore.view.browser
    model, table = browser.model, browser.table
    assert browser.count.text() == "12,000 results"
    table.scrollToBottom()
    QApplication.processEvents()
    assert model.record(11_999) is not None
    assert model.cached_rows <= 4 * 200  # a few pages, never the whole store

    header = table.horizontalHeader()
    latency = [c.key for c in COLUMNS].index("latency_ms")
    section = QPoint(header.sectionViewportPosition(latency) + header.sectionSize(latency) // 2, header.height() // 2)
    for _ in range(2):  # a click sorts by the column, a second click reverses the order
        click(header.viewport(), section)
        qtbot.waitUntil(lambda: not model.pending)
        ascending = header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
        shown = [model.record(r)["latency_ms"] for r in range(0, 12_000, 997)]
        assert shown == sorted(shown, reverse=not ascending)
        extreme = values[:, 0].min() if ascending else values[:, 0].max()
        assert model.record(0)["latency_ms"] == pytest.approx(extreme)

    plot = explorer.explore.view.plot
    plotted = int(plot._ok.sum())
    qtbot.keyClicks(browser.filter_edit, "latency < 1 canvas")  # spaces around the operator
    qtbot.waitUntil(lambda: not model.pending)
    expected = int((values[6000:, 0] < 1).sum())
    assert model.rowCount() == expected and browser.count.text() == f"{expected:,} of 12,000"
    assert {model.record(r)["origin"] for r in range(min(expected, 50))} == {"search:canvas"}
    # the plot shows what the table shows: the filtered results only
    qtbot.waitUntil(lambda: plot.filtered is not None and len(plot.filtered) == expected)
    assert 0 < plot._ok.sum() <= expected < plotted
    assert set(plot.session.frame.ids[plot._ok].tolist()) <= set(model.ids.tolist())
    assert f"filter: {expected:,} match" in plot.toolbar.summary.text()
    browser.filter_edit.setText("speedup<fast")
    assert "not a number" in browser.filter_error and browser.filter_edit.property("invalid")
    assert browser.filter_message.isVisible()  # the reason is on screen, not only in a tooltip
    assert "Filter not applied: 'speedup<fast': speedup is a number column" in browser.filter_message.text()
    assert model.rowCount() == expected  # a bad filter keeps the last good one
    browser.filter_edit.setText("conv " * 1000)  # beyond what one SQL expression holds: said, not 0 rows
    assert (
        browser.filter_message.text()
        == "Filter not applied: the filter has 1,000 terms; at most 256 are read: narrow it down"
    )
    assert model.rowCount() == expected
    browser.filter_edit.clear()
    qtbot.waitUntil(lambda: plot.filtered is None and not model.pending)
    assert not browser.filter_message.isVisible() and int(plot._ok.sum()) == plotted


def test_rename_and_delete_results(qtbot, store_path, explorer, dialogs):
    ids = add_results(store_path, random_values(5))
    wait_for_results(qtbot, explorer, 5)
    view = explorer.explore.view
    view.selection.set(ids[:2], current=ids[0])
    browser = view.browser
    index = browser.model.index(int(browser.model.rows_of([ids[0]])[0]), 1)
    assert browser.model.setData(index, "my conv")
    qtbot.waitUntil(lambda: not browser.model.pending)
    assert {browser.model.record(r)["operator_name"] for r in range(5)} == {"my conv"}

    dialogs.answer = QMessageBox.StandardButton.Yes
    browser.buttons["delete"].click()
    assert dialogs.calls[-1][0] == "question" and "Delete 2 result(s)" in dialogs.calls[-1][2]
    wait_for_results(qtbot, explorer, 3)
    with Store(store_path) as store:
        assert sorted(r["measurement_id"] for r in store.results()) == sorted(ids[2:])
    assert len(view.selection) == 0


def test_export_a_result_and_the_results_from_the_browser(qtbot, store_path, explorer, tmp_path):
    [first] = add_results(store_path, [(1.0, 2e6)], "hand-made", {"C_in": 8, "C_out": 8, "H": 8, "W": 8, "K": 3})
    add_results(store_path, [(0.5, 3e6)], "search:canvas")
    wait_for_results(qtbot, explorer, 2)
    view = explorer.explore.view
    assert not view.browser.buttons["export"].isEnabled()
    view.selection.set([first], current=first)
    view.browser.buttons["export"].click()
    dialog = view.export_dialog
    assert dialog.windowTitle() == "Export conv2d"
    dialog.set_format("json")
    dialog.path_edit.setText(str(tmp_path / "picked.json"))
    with qtbot.waitSignal(dialog.exported, timeout=60_000):
        dialog.export_button.click()
    exported = read_document(tmp_path / "picked.json")
    assert exported["bindings"]["C_in"] == 8 and exported["name"] == "conv2d"

    view.browser.named_actions["export_results"].trigger()
    dialog = view.export_dialog
    dialog.set_format("csv")
    dialog.path_edit.setText(str(tmp_path / "all.csv"))
    with qtbot.waitSignal(dialog.exported, timeout=60_000):
        dialog.export_button.click()
    lines = (tmp_path / "all.csv").read_text().splitlines()
    assert len(lines) == 3 and "latency_ms" in lines[0]


def test_compare_two_results(qtbot, store_path, explorer):
    first = add_results(store_path, [(1.0, 2e6)], "hand-made", {"C_in": 8, "C_out": 8, "H": 8, "W": 8, "K": 3})
    second = add_results(store_path, [(0.5, 1e6)], "search:canvas", {"C_in": 8, "C_out": 8, "H": 8, "W": 8, "K": 3})
    wait_for_results(qtbot, explorer, 2)
    view = explorer.explore.view
    view.selection.set(first + second)
    assert view.browser.buttons["compare"].isEnabled()
    view.browser.buttons["compare"].click()
    dialog = view.compare_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.names == ["conv2d", "depthwise_separable"]
    latency_row = [dialog.numbers.verticalHeaderItem(r).text() for r in range(dialog.numbers.rowCount())].index(
        "Latency (ms)"
    )
    assert dialog.numbers.item(latency_row, 1).font().bold()  # the faster one is marked
    assert dialog.numbers.item(latency_row, 2).text() == "0.5×"
    assert dialog.changed_lines() > 0 and "nn.Module" in dialog.editors[0].toPlainText()
    assert all(card.scene.nodes_rect().isValid() for card in dialog.cards)
    dialog.close()


# -- jobs -----------------------------------------------------------------------------------------
def test_cancel_a_queued_job_from_the_monitor(qtbot, store_path, explorer):
    with Store(store_path) as store:  # queued by someone else, e.g. `tessera submit`
        doc = read_document(EXAMPLES / "conv2d.json")
        job_id = JobQueue(store).submit(
            "measure",
            {"operator": doc, "bindings": doc["bindings"], "tune_trials": 0, "device": "local"},
            operator_id=store.add_operator(doc, "conv2d"),
        )
    monitor = explorer.explore.monitor
    qtbot.waitUntil(lambda: monitor.model.rowCount() == 1, timeout=10_000)
    assert explorer.explore.indicator.text() == "0 running, 1 queued"
    assert monitor.model.data(monitor.model.index(0, HEADERS.index("State"))) == QUEUED
    explorer.explore.actions["jobs"].trigger()
    assert explorer.explore.dock.isVisible()
    monitor.table.selectRow(0)
    assert monitor.cancel_button.isEnabled() and not monitor.retry_button.isEnabled()
    monitor.cancel_button.click()
    qtbot.waitUntil(lambda: explorer.explore.session.jobs[job_id].state == CANCELLED, timeout=10_000)
    assert monitor.model.data(monitor.model.index(0, HEADERS.index("Message"))) == "cancelled by the user"
    assert explorer.explore.indicator.text() == "No jobs running"
    monitor.table.selectRow(0)
    assert monitor.retry_button.isEnabled()
    monitor.retry_button.click()  # workers are off, so it waits in the queue
    qtbot.waitUntil(lambda: explorer.explore.session.jobs[job_id].state == QUEUED, timeout=10_000)


def test_evaluate_queues_one_job_per_bindings_set_and_edits_cancel_them(qtbot, store_path, explorer):
    explorer.show_page("editor")
    explorer.load(EXAMPLES / "conv2d.json")
    explorer.explore.actions["evaluate"].trigger()
    dialog = explorer.explore.dialog
    assert dialog is not None and dialog.isVisible() and dialog.windowTitle() == "Evaluate"
    dialog.bindings.setPlainText("C_in=8, C_out=8, H=16, W=16, K=3\nC_in=8, C_out=16, H=16, W=16, K=0")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.error.text() == "line 2: binding K=0: sizes must be positive integers" and dialog.isVisible()
    dialog.bindings.setPlainText("C_in=8, C_out=8, H=16, Wd=16, K=3")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.error.text().startswith(
        "line 1 (C_in=8, C_out=8, H=16, Wd=16, K=3): no variable Wd in conv2d; did you mean W?"
    )
    dialog.bindings.setPlainText("C_in=8, C_out=8, H=16, W=16, K=3\nC_in=8, C_out=16, H=16, W=16")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: explorer.explore.dialog is None)
    with Store(store_path) as store:
        jobs = JobQueue(store).jobs()
    assert [j.state for j in jobs] == [QUEUED, QUEUED]
    assert [j.payload["bindings"] for j in jobs] == [
        {"C_in": 8, "C_out": 8, "H": 16, "W": 16, "K": 3},
        {"C_in": 8, "C_out": 16, "H": 16, "W": 16, "K": 3},
    ]
    assert all(j.payload["tune_trials"] == 0 and j.operator_name == "conv2d" for j in jobs)
    assert explorer.explore.dock.isVisible()

    explorer.document.editor.move({"unfold_w": (500.0, 40.0)})  # layout only: same operator
    with Store(store_path) as store:
        assert [j.state for j in JobQueue(store).jobs()] == [QUEUED, QUEUED]
    explorer.document.editor.set_params("unfold_w", K=5)  # a real edit
    with Store(store_path) as store:
        jobs = JobQueue(store).jobs()
    assert [j.state for j in jobs] == [CANCELLED, CANCELLED]
    assert all("superseded" in j.error for j in jobs)
    assert "Cancelled 2 job(s)" in explorer.statusBar().currentMessage()


def test_tune_a_selection_of_results(qtbot, store_path, explorer):
    sizes = {"C_in": 8, "C_out": 8, "H": 16, "W": 16, "K": 3}
    first = add_results(store_path, [(1.0, 2e6), (1.5, 2e6)], "hand-made", sizes)
    second = add_results(store_path, [(0.7, 1e6)], "search:canvas", {**sizes, "C_out": 16})
    wait_for_results(qtbot, explorer, 3)
    view = explorer.explore.view
    view.selection.set(first + second)
    view.browser.buttons["tune"].click()
    dialog = explorer.explore.dialog
    assert dialog.windowTitle() == "Tune" and dialog.own.isChecked() and not dialog.bindings.isEnabled()
    dialog.trials.setValue(5)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: explorer.explore.dialog is None)
    with Store(store_path) as store:
        jobs = JobQueue(store).jobs()
    # one job per operator and bindings: the two conv2d results share both
    assert sorted((j.operator_name, j.payload["bindings"]["C_out"], j.payload["tune_trials"]) for j in jobs) == [
        ("conv2d", 8, 5),
        ("depthwise_separable", 16, 5),
    ]
    assert all(j.input_key is None for j in jobs)  # results are not being edited: never stale


def test_every_window_shortcut_is_unique(explorer):
    """Two actions on one key make Qt ignore the key for both ("ambiguous shortcut")."""
    from PySide6.QtGui import QAction

    explorer.new_document()  # a valid operator: Evaluate and Tune are enabled
    seen: dict[str, str] = {}
    for action in explorer.findChildren(QAction):
        for key in action.shortcuts():
            text = key.toString()
            if action.isEnabled() and action.shortcutContext() != Qt.ShortcutContext.WidgetWithChildrenShortcut:
                assert text not in seen, f"{text} is bound to both {seen[text]!r} and {action.text()!r}"
                seen[text] = action.text()
    assert {"Ctrl+R", "Ctrl+T", "Ctrl+J", "Ctrl+1", "Ctrl+2"} <= set(seen)


def test_job_runner_setting_chooses_where_workers_send_jobs(qtbot, explorer):
    """Run > Job Runner…: a bad Ray address is refused in the dialog; a good one is kept in
    the settings and used when the workers start (here the runner cannot reach a cluster,
    which is fine: only the wiring is under test, and the workers are stopped at once)."""
    explore = explorer.explore
    explore.actions["runner"].trigger()
    dialog = explore.dialog
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert dialog.local.isChecked() and ok.isEnabled() and not dialog.address.isEnabled()
    dialog.ray.setChecked(True)
    qtbot.keyClicks(dialog.address, "127.0.0.1")
    assert not ok.isEnabled() and "is not HOST:PORT" in dialog.error.text()
    qtbot.keyClicks(dialog.address, ":6399")
    assert ok.isEnabled() and dialog.error.text() == ""
    ok.click()
    assert explorer.settings.value("explore/executor") == "ray"
    assert (explore.session.executor, explore.session.executor_address) == ("ray", "127.0.0.1:6399")
    messages = []
    explore.session.message.connect(messages.append)
    explore.session.start_workers()
    try:
        assert any("the Ray cluster at 127.0.0.1:6399 for fisher, test, train" in m for m in messages), messages
    finally:
        explore.session.stop_workers(grace=0.1)


def test_evaluate_and_tune_are_disabled_on_an_operator_with_errors_and_say_why(qtbot, explorer, dialogs):
    explorer.show_page("editor")
    explorer.load(EXAMPLES / "conv2d.json")
    actions = explorer.explore.actions
    assert actions["tune"].isEnabled() and actions["tune"].toolTip() == actions["tune"].statusTip()
    explorer.document.editor.set_params("unfold_w", dim=0)
    for key in ("evaluate", "tune", "transfer"):
        assert not actions[key].isEnabled()
        assert actions[key].toolTip() == "Not yet: the operator has 1 error(s); see Diagnostics"
    actions["tune"].trigger()
    assert explorer.explore.dialog is None and dialogs.calls == []
    explorer.commands["undo"].trigger()
    assert actions["tune"].isEnabled()


EXPLORER_PROBE = """
import json, sys
from app.gui.main import wait_until_idle
from views.theme import application
from app.gui.window import MainWindow
app = application()
window = MainWindow(settings=None, store=sys.argv[1])
window.show()
window.show_page("explorer")
wait_until_idle(app, window)
view = window.explore.view
view.selection.set(view.browser.model.ids[:2])
view.browser.buttons["compare"].click()
app.processEvents()
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'tvm', 'tvm_ffi'})
print(json.dumps({'heavy': heavy, 'rows': view.browser.model.rowCount(), 'diff': view.compare_dialog.changed_lines()}))
window.close()
"""


def test_explorer_never_imports_torch_or_tvm(tmp_path):
    import subprocess
    import sys

    from .test_startup import ENV, ROOT

    store = tmp_path / "results.db"
    add_results(store, [(1.0, 1e6)], "hand-made", {"C_in": 8, "C_out": 8, "H": 8, "W": 8, "K": 3})
    add_results(store, [(2.0, 1e6)], "baseline", {"C_in": 8, "C_out": 8, "H": 8, "W": 8})
    result = subprocess.run(
        [sys.executable, "-c", EXPLORER_PROBE, str(store)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["heavy"] == [] and report["rows"] == 2 and report["diff"] > 0


def test_screenshot_of_the_explorer(tmp_path):
    import subprocess
    import sys

    from PySide6.QtGui import QColor, QImage

    from views.result_columns import ORIGIN_COLORS

    from .test_startup import ENV, ROOT

    store = tmp_path / "results.db"
    add_results(store, random_values(120))
    out = tmp_path / "explorer.png"
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "gui", "--store", str(store), "--view", "explorer", "--screenshot", str(out)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1600, 1000)
    blue = QColor(ORIGIN_COLORS["hand-made"])
    markers = sum(image.pixelColor(x, y) == blue for x in range(0, 1600, 2) for y in range(0, 700, 2))
    assert markers > 100  # the hand-made results are drawn


# -- the whole loop, with TVM ---------------------------------------------------------------------
@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_tune_an_operator_then_find_it_on_the_plot(qtbot, dialogs, store_path, tmp_path, monkeypatch):
    """Open conv2d.json, press Tune with a tiny budget, watch the job in the monitor, see the
    result on the plot and in the table, click it, and get the operator back in the editor."""
    from app.gui.settings import open_settings
    from app.gui.window import MainWindow

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # workers tune into a fresh database
    window = MainWindow(settings=open_settings(tmp_path / "settings.ini"), store=str(store_path))
    try:
        window.resize(1400, 900)
        window.show()
        qtbot.waitExposed(window)
        window.open_file(EXAMPLES / "conv2d.json")
        type_bindings(qtbot, window.bindings_bar, "C_in=4, C_out=4, H=8, W=8, K=3")
        window.explore.actions["tune"].trigger()
        dialog = window.explore.dialog
        assert parse_bindings(dialog.bindings.toPlainText()) == {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3}
        dialog.trials.setValue(2)
        dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()

        session, monitor = window.explore.session, window.explore.monitor
        qtbot.waitUntil(lambda: monitor.model.rowCount() == 1, timeout=10_000)
        assert session.workers_running and monitor.model.data(monitor.model.index(0, 1)) == "measure · tune 2"
        qtbot.waitUntil(lambda: monitor.model.job(0).state == "running", timeout=120_000)
        qtbot.waitUntil(lambda: monitor.model.job(0).state in ("done", "failed"), timeout=1_500_000)
        job = monitor.model.job(0)
        assert job.state == "done", job.error
        assert monitor.model.data(monitor.model.index(0, HEADERS.index("Progress"))) == "100%"
        assert monitor.model.data(monitor.model.index(0, HEADERS.index("Where"))).startswith("worker ")

        window.pages.actions["explorer"].trigger()
        qtbot.waitUntil(window.is_idle, timeout=20_000)  # the page is built a piece at a time
        view = window.explore.view
        qtbot.waitUntil(
            lambda: view.session.frame.count == 1 and view.browser.model.rowCount() == 1 and window.is_idle(),
            timeout=20_000,
        )
        result_id = view.browser.model.id_at(0)
        record = view.browser.model.record(0)
        assert record["operator_name"] == "conv2d" and record["latency_ms"] > 0
        assert record["tuned"] == (record["schedule_source"] == "tuned")  # tuning kept only if faster
        plot, viewport = view.plot, view.plot.plot.viewport()
        pos = viewport_point(plot, result_id)
        click(viewport, pos)
        assert view.selection.current == result_id
        assert 1 <= view.panel.convergence.trial_count <= 2
        click(viewport, pos, double=True)
        qtbot.waitUntil(lambda: window.pages.current == "editor")
        graph = window.document.graph
        assert content_hash(to_document(graph)) == content_hash(read_document(EXAMPLES / "conv2d.json"))
        assert "unfold_w" in graph.g  # the document as it was drawn, from the job
        assert window.document.bindings == {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3}

        # the same kernel class at other sizes reuses that tuned schedule, the store as its source
        window.explore.actions["transfer"].trigger()
        dialog = window.explore.dialog
        dialog.add_source(str(store_path))
        dialog.bindings.setPlainText("C_in=4, C_out=6, H=10, W=6, K=3")
        dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
        qtbot.waitUntil(lambda: monitor.model.rowCount() == 2, timeout=10_000)
        transfer = next(i for i in range(2) if monitor.model.job(i).kind == "transfer")
        qtbot.waitUntil(lambda: monitor.model.job(transfer).state in ("done", "failed"), timeout=600_000)
        job = monitor.model.job(transfer)
        assert job.state == "done", job.error
        transfer = job.result["transfer"]
        assert transfer["found"] >= 1 and transfer["applied"] == transfer["found"]
        window.pages.actions["explorer"].trigger()
        qtbot.waitUntil(lambda: view.browser.model.rowCount() == 2 and window.is_idle(), timeout=20_000)
        records = [view.browser.model.record(i) for i in range(2)]
        reused = next(r for r in records if json.loads(r["bindings"])["C_out"] == 6)
        assert reused["schedule_source"] == job.result["schedule_source"]
        assert reused["schedule_source"].startswith("transfer:local/") or reused["schedule_source"] == "untuned"
    finally:
        window.close()


def test_a_front_of_results_at_different_sizes_says_so_and_filters_to_one(qtbot, store_path, explorer):
    small = {"C_in": 16, "C_out": 16, "H": 16, "W": 16, "K": 3}
    large = {**small, "H": 56, "W": 56}
    add_results(store_path, [(1.0, 2e6)], "hand-made", small)
    add_results(store_path, [(0.5, 3e6)], "search:canvas", large)
    add_results(
        store_path, [(0.2, 4e6)], "search:mcts", {k: v for k, v in small.items() if k != "K"}
    )  # no K: same size
    wait_for_results(qtbot, explorer, 3)
    panel, browser = explorer.explore.view.panel, explorer.explore.view.browser
    qtbot.waitUntil(lambda: panel.front_list.topLevelItemCount() == 3, timeout=10_000)
    assert (
        panel.sizes_note.isVisible() and "mixes results measured at different sizes (H, W)" in panel.sizes_note.text()
    )
    assert [panel.sizes_box.itemText(i) for i in (1, 2)] == ["H=16, W=16", "H=56, W=56"]
    index = 2
    panel.sizes_box.activated.emit(index)
    assert browser.filter_edit.text() == "bindings.H=56 bindings.W=56"
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1 and not browser.model.pending, timeout=10_000)
    assert json.loads(browser.model.record(0)["bindings"])["H"] == 56
    qtbot.waitUntil(lambda: panel.front_list.topLevelItemCount() == 1, timeout=10_000)
    assert not panel.sizes_note.isVisible()  # one size on the front now: nothing to say
