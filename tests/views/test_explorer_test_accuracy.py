"""A result's reported accuracy in the Explorer: the results table shows test accuracy over seeds
(mean ± std) and the paired difference from the original with its 95% interval; the result panel
says in words whether that is within the margin, and that the other accuracy is the validation
accuracy that selected it."""

from __future__ import annotations

import pytest

from core.ir.serialize import read_document
from core.store import Store
from tests.support import EXAMPLES
from views.result_columns import COLUMNS

pytestmark = pytest.mark.gui

#: (validation accuracy, test mean, std, paired difference, its 95% interval): one within 1 point, one not shown
REPORTED = {
    "grouped_conv": (0.962, 0.951, 0.004, -0.003, (-0.009, 0.004)),
    "shift_conv": (0.955, 0.912, 0.011, -0.041, (-0.068, -0.014)),
}


def test_the_table_and_the_panel_show_test_accuracy_over_seeds_and_its_verdict(qtbot, store_path, explorer):
    with Store(store_path) as store:
        for name, (val, mean, std, difference, (low, high)) in REPORTED.items():
            op = store.add_operator(read_document(EXAMPLES / f"{name}.json"), name, "search:mcts")
            labels = {"dataset": "fashion-mnist@24px", "backbone": "resnet18/w16"}
            store.add_score(op, {**labels, "epochs": 10, "accuracy": val, "accuracy_per_epoch": [val]})
            test = {"test_seeds": 3, "test_accuracy": mean, "test_accuracy_std": std, "test_margin": 0.01}
            bounds = {"test_difference": difference, "test_difference_low": low, "test_difference_high": high}
            store.add_score(op, {**labels, "epochs": 10, **test, **bounds})
    view = explorer.explore.view
    model = view.browser.model
    qtbot.waitUntil(lambda: model.rowCount() == 2 and explorer.is_idle(), timeout=20_000)
    keys = [c.key for c in COLUMNS]
    rows = {model.record(r)["operator_name"]: r for r in range(2)}

    def cell(name: str, key: str) -> str:
        return model.data(model.index(rows[name], keys.index(key)))

    assert cell("grouped_conv", "accuracy") == "0.962"  # the validation accuracy stays as it was
    assert cell("grouped_conv", "test_accuracy") == "0.951 ± 0.004 (3 seeds)"
    assert cell("grouped_conv", "test_difference") == "-0.3 [-0.9, +0.4]"
    assert cell("shift_conv", "test_difference") == "-4.1 [-6.8, -1.4]"

    view.selection.set([model.id_at(rows["grouped_conv"])])
    panel = view.panel
    assert panel.values["test_accuracy"].text() == "0.951 ± 0.004 (3 seeds)" and panel.report.isVisible()
    assert panel.report.text() == (
        "Test split, trained again with 3 seeds and paired with the original: within 1 point: the 95% interval "
        "of the difference, -0.9 to +0.4 points, lies above -1. Accuracy above is the validation accuracy that "
        "selected it."
    )
    view.browser.table.scrollTo(model.index(rows["grouped_conv"], keys.index("test_difference")))
    explorer.grab().save(str(store_path.parent / "explorer-test-accuracy.png"))
    view.selection.set([model.id_at(rows["shift_conv"])])
    assert "not shown within 1 point: the 95% interval of the difference, -6.8 to -1.4 points" in panel.report.text()
