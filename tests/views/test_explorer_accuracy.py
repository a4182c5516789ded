"""The Pareto plot's axes fit what the store holds and what they show: accuracy against tuned
end-to-end speedup (the original network a star at 1x) once results have both, otherwise the
pair that shows the most results; accuracy linear within 0..1 whatever was shown before; the
hover card goes with the mouse."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication

from core.ir.serialize import read_document
from core.store import Store
from tests.support import EXAMPLES

from .discovery_data import OPERATORS, discovery_results
from .helpers import move

pytestmark = pytest.mark.gui


def shown(qtbot, window, count: int):
    plot = window.explore.view.plot
    qtbot.waitUntil(lambda: plot.session.frame.count == count and window.is_idle(), timeout=20_000)
    return plot


def tick_labels(plot, side: str) -> list[str]:
    """The tick labels the axis draws now."""
    image = QImage(400, 400, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _, _, texts = plot.axes[side].generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _, _, text in texts if text]


def test_accuracy_against_tuned_speedup_with_the_original_network_as_a_star(qtbot, store_path, explorer):
    figures = discovery_results(store_path)
    explorer.show_page("explorer")
    plot = shown(qtbot, explorer, len(figures) + 1)
    assert (plot.x_key, plot.y_key) == ("e2e_speedup", "accuracy") and plot.log == [False, False]
    assert [c.currentText() for c in plot.toolbar.axis_combos] == [
        "End-to-end speedup (tuned, vs the original)",
        "Accuracy",
    ]
    x, y = plot.reference.star.getData()
    assert list(x) == [1.0] and list(y) == [pytest.approx(0.9)]  # the original network: 1x, its own accuracy
    assert (
        plot.reference.label.isVisible()
        and plot.reference.parity_line.isVisible()
        and plot.reference.parity_line.value() == 1.0
    )
    assert plot.toolbar.summary.text().startswith(f"{len(figures) + 1} results · {len(figures)} plotted")
    names = {plot.session.row(int(i))["operator_name"] for i in plot.front_ids()}
    assert names == {"involution", "depthwise_separable", "grouped_conv", "shift_conv"}  # mixed_conv is dominated
    (_, _), (y0, y1) = plot.viewbox.viewRange()
    assert 0.0 <= y0 < 0.62 and 0.91 < y1 <= 1.0
    plot.grab().save(str(store_path.parent / "explorer-accuracy-speedup.png"))


def test_default_axes_show_the_most_results_and_accuracy_fits_its_axis(qtbot, store_path, explorer):
    with Store(store_path) as store:  # 3 measured kernels, 6 operators scored by Fisher Potential only
        device = store.add_device("local", "local")
        conv = store.add_operator(read_document(EXAMPLES / "conv2d.json"), "conv2d")
        for latency in (1.0, 2.0, 3.0):
            store.add_measurement(
                conv, device, {"latency_ms": latency, "flops": 2e6 * latency, "bindings": {"C_in": 8}}
            )
        for i, name in enumerate((*OPERATORS, "gated_separable")):
            op = store.add_operator(read_document(EXAMPLES / f"{name}.json"), name, "search:canvas")
            store.add_score(op, {"dataset": "digits@16px", "backbone": "resnet18/w16", "fisher_potential": 10.0 + i})
    plot = shown(qtbot, explorer, 9)
    assert (plot.x_key, plot.y_key) == ("flops", "fisher_potential")  # 6 results; latency against FLOPs shows 3
    assert not plot.reference.star.getData()[0].size and not plot.reference.parity_line.isVisible()
    plot.set_axes("latency_ms", "flops", True, True)
    assert tick_labels(plot, "left")  # FLOPs ticks, on a log axis

    combo = plot.toolbar.axis_combos[1]
    combo.setFocus()
    qtbot.keyClicks(combo, "Accuracy")  # the user picks Accuracy for Y
    assert plot.y_key == "accuracy" and plot.log[1] is False and not plot.toolbar.log_buttons[1].isChecked()
    with Store(store_path) as store:  # an accuracy arrives for the measured operator
        store.add_score(conv, {"dataset": "digits@16px", "backbone": "resnet18/w16", "accuracy": 0.02})
    plot.session.reload()
    qtbot.waitUntil(lambda: plot._ok.sum() == 3 and explorer.is_idle(), timeout=20_000)
    plot.fit()
    qtbot.waitUntil(lambda: not plot.redraw_pending)
    labels = tick_labels(plot, "left")
    assert len(labels) >= 2 and all(0.0 <= float(text) <= 1.0 for text in labels), labels  # no FLOPs, no negatives
    (_, _), (y0, y1) = plot.viewbox.viewRange()
    assert y0 >= 0.0 and y1 <= 1.0


def test_the_hover_card_leaves_with_the_mouse(qtbot, store_path, explorer):
    discovery_results(store_path)
    plot = shown(qtbot, explorer, len(OPERATORS) + 1)
    viewport = plot.plot.viewport()
    target = int(plot.front_ids()[0])
    pos = plot.plot.mapFromScene(plot.scene_position(target))
    move(qtbot, viewport, pos)
    assert plot.card.result_id == target and plot.card.label.isVisible()
    empty = next(  # a place on the plot with no point near it
        p
        for p in (pos + QPoint(dx, dy) for dx in range(-200, 201, 20) for dy in range(-200, 201, 20))
        if viewport.rect().contains(p) and plot.point_at(plot.plot.mapToScene(p)) is None
    )
    move(qtbot, viewport, empty)  # off the point
    assert plot.card.result_id is None and not plot.card.label.isVisible()
    move(qtbot, viewport, pos)
    assert plot.card.label.isVisible()
    QApplication.sendEvent(viewport, QEvent(QEvent.Type.Leave))  # what the window system says as the mouse leaves
    assert plot.card.result_id is None and not plot.card.label.isVisible()
