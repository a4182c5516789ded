"""The operator gallery on a real store file: the best operators of the chosen front with
thumbnails of their graphs, the origin filter (a front of its own per origin), open and
export requests, and refreshing as new results arrive."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.ir.serialize import read_document
from core.store import Store
from tests.support import EXAMPLES
from tests.views.discovery_data import discovery_results
from views.gallery import ALL_ORIGINS, THUMBNAIL, OperatorGallery

pytestmark = pytest.mark.gui

# name, origin, latency ms, accuracy: conv2d and shift_conv are on the global front;
# grouped_conv is dominated by conv2d, but it is the best search:mcts found after involution
OPERATORS = [
    ("conv2d", "hand-made", 1.0, 0.70),
    ("grouped_conv", "search:mcts", 2.0, 0.65),
    ("shift_conv", "search:canvas", 0.5, 0.60),
    ("involution", "search:mcts", 3.0, 0.75),
    ("depthwise_separable", "search:mcts", 4.0, 0.60),
]


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "results.db"
    with Store(path) as store:
        for name, origin, latency, accuracy in OPERATORS:
            doc = read_document(EXAMPLES / f"{name}.json")
            oid = store.add_operator(doc, name, origin)
            store.add_measurement(oid, None, {"latency_ms": latency, "flops": 1e6, "bindings": doc["bindings"]})
            store.add_score(oid, {"dataset": "cifar10", "backbone": "resnet", "accuracy": accuracy})
    return path


@pytest.fixture
def gallery(qtbot, store_path):
    widget = OperatorGallery(store_path)
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _names(gallery) -> list[str]:
    return [c.name for c in gallery.cards]


def _colours(icon) -> int:
    image = icon.pixmap(THUMBNAIL).toImage()
    return len({image.pixel(x, y) for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)})


def test_the_front_is_shown_best_first_with_thumbnails(gallery):
    assert gallery.front_box.currentData() == ("latency_ms", "accuracy")
    assert _names(gallery) == ["shift_conv", "conv2d", "involution"]
    assert gallery.list.count() == 3
    assert gallery.status.text().startswith("3 operators on the front. No result has a tuned end-to-end speedup yet")
    first = gallery.list.item(0)
    assert first.text().splitlines() == ["shift_conv", "search:canvas", "Latency (ms) 0.5  ·  Accuracy 0.6"]
    assert _colours(first.icon()) > 8  # a drawn graph (cards, wires, text), not a blank tile


def test_filtering_by_origin_shows_that_origins_own_front(gallery):
    assert [gallery.origin_box.itemText(i) for i in range(gallery.origin_box.count())] == [
        ALL_ORIGINS,
        "hand-made",
        "search:canvas",
        "search:mcts",
    ]
    gallery.set_origin("search:mcts")
    assert _names(gallery) == ["grouped_conv", "involution"]
    assert all(c.origin == "search:mcts" for c in gallery.cards)
    gallery.set_origin(None)
    assert _names(gallery) == ["shift_conv", "conv2d", "involution"]


def test_another_front_and_an_empty_one(gallery):
    gallery.set_front("latency_ms", "flops")
    assert _names(gallery) == ["shift_conv"]
    gallery.set_front("latency_ms", "fisher_potential")
    assert gallery.cards == [] and gallery.list.count() == 0
    assert gallery.status.text() == "No results have both Latency (ms) and Fisher Potential yet."


def test_double_click_opens_and_the_buttons_open_or_export(gallery, qtbot):
    item = gallery.list.item(1)
    rect = gallery.list.visualItemRect(item)
    with qtbot.waitSignal(gallery.openRequested) as opened:  # a real double click: press, release, press again
        QTest.mouseClick(gallery.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        QTest.mouseDClick(gallery.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert opened.args == [1]  # conv2d is operator 1
    assert gallery.export_button.isEnabled()
    with qtbot.waitSignal(gallery.exportRequested) as exported:
        gallery.export_button.click()
    assert exported.args == [1]
    gallery.list.clearSelection()
    assert not gallery.open_button.isEnabled() and not gallery.export_button.isEnabled()


def test_refresh_shows_new_results_and_new_origins(gallery, store_path):
    with Store(store_path) as store:
        oid = store.add_operator(read_document(EXAMPLES / "gated_separable.json"), "gated", "search:sequence")
        store.add_measurement(oid, None, {"latency_ms": 0.2, "flops": 1e6})
        store.add_score(oid, {"dataset": "cifar10", "backbone": "resnet", "accuracy": 0.9})
    assert _names(gallery) == ["shift_conv", "conv2d", "involution"]
    gallery.refresh()
    assert _names(gallery) == ["gated"]
    assert gallery.origin_box.findText("search:sequence") >= 0


def test_a_discovery_store_shows_accuracy_against_tuned_speedup(qtbot, tmp_path):
    figures = discovery_results(tmp_path / "d.db", baseline=0.9)
    widget = OperatorGallery(tmp_path / "d.db")
    qtbot.addWidget(widget)
    assert widget.front_box.currentData() == ("e2e_speedup", "accuracy")
    assert _names(widget) == sorted(
        ("involution", "depthwise_separable", "grouped_conv", "shift_conv"), key=lambda n: -figures[n][0]
    )  # the fastest first; mixed_conv is slower and less accurate than grouped_conv
    assert widget.list.item(0).text().splitlines()[-1] == "Network speedup 2.20×  ·  Accuracy 0.62"
    assert widget.status.text() == "4 operators on the front. The original network: 1.00× at 90.0% accuracy."
    widget.resize(1100, 560)
    widget.grab().save(str(tmp_path / "gallery-accuracy-speedup.png"))


def test_without_accuracy_the_best_front_there_is_and_what_is_missing(qtbot, tmp_path):
    with Store(tmp_path / "k.db") as store:  # kernels timed, nothing scored
        for name, _, latency, _ in OPERATORS:
            doc = read_document(EXAMPLES / f"{name}.json")
            oid = store.add_operator(doc, name)
            store.add_measurement(
                oid, None, {"latency_ms": latency, "flops": 1e6 / latency, "bindings": doc["bindings"]}
            )
    widget = OperatorGallery(tmp_path / "k.db")
    qtbot.addWidget(widget)
    assert widget.front_box.currentData() == ("latency_ms", "flops") and widget.cards
    assert widget.status.text().startswith(f"{len(widget.cards)} operator")
    assert "No result has an accuracy yet" in widget.status.text()
    widget.front_box.setFocus()
    qtbot.keyClick(widget.front_box, Qt.Key.Key_Home)  # the user's own pick: no note about the default
    qtbot.keyClick(widget.front_box, Qt.Key.Key_Down)
    assert widget.front_box.currentData() == ("latency_ms", "accuracy")
    assert widget.status.text() == "No results have both Latency (ms) and Accuracy yet."


def test_without_a_store_the_gallery_says_so(qtbot, tmp_path):
    widget = OperatorGallery(tmp_path / "none.db")
    qtbot.addWidget(widget)
    assert widget.cards == [] and "No results store yet" in widget.status.text()
    assert not (tmp_path / "none.db").exists()
