"""A discovery run's references in the Explorer: the original narrowed to the survivor's FLOPs and
depthwise-separable are rows of their own (origin "reference"), with their test accuracy over
seeds, the paired difference and the tuned speedup, beside the survivor they are held against."""

from __future__ import annotations

import pytest

from core.store import Store
from tests.views.discovery_data import held_out, run_with_references
from views.result_columns import COLUMNS

pytestmark = pytest.mark.gui

NARROWED = "resnet18 narrowed (x0.438 trained, x0.453 timed)"


def test_the_explorer_lists_the_references_beside_the_survivor(qtbot, store_path, explorer):
    with Store(store_path) as store:
        run_with_references(store, held_out(-0.003, -0.008, 0.002), 2.0)
    view = explorer.explore.view
    model = view.browser.model
    qtbot.waitUntil(lambda: model.rowCount() == 3 and explorer.is_idle(), timeout=20_000)
    keys = [c.key for c in COLUMNS]
    rows = {model.record(r)["operator_name"]: r for r in range(3)}
    assert set(rows) == {"mcts-1", NARROWED, "depthwise_separable (reference)"}

    def cell(name: str, key: str) -> str:
        return model.data(model.index(rows[name], keys.index(key)))

    assert cell(NARROWED, "origin") == cell("depthwise_separable (reference)", "origin") == "reference"
    assert cell(NARROWED, "test_accuracy") == "0.947 ± 0.004 (3 seeds)"
    assert cell(NARROWED, "test_difference") == "-0.3 [-0.8, +0.2]"
    assert cell(NARROWED, "e2e_speedup") == "2.00×" and cell("mcts-1", "e2e_speedup") == "2.50×"
    view.plot.set_axes("e2e_speedup", "test_accuracy", False, False)  # the survivor above its references
    assert view.plot.toolbar.summary.text().startswith("3 results · 3 plotted")
    qtbot.wait(300)  # the plot frames its points on the next paint
    view.browser.table.scrollTo(model.index(rows[NARROWED], keys.index("test_difference")))
    explorer.grab().save(str(store_path.parent / "explorer-references.png"))
