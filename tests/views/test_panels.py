"""The pages beside the editor and the explorer (Search, Sequences) and the Export action."""

import json

from PySide6.QtWidgets import QApplication

from core.jobs.queue import DONE
from tests.support import EXAMPLES


def test_search_panel_runs_a_real_search_job(window, qtbot, tmp_path):
    window.explore.store_path = str(tmp_path / "search.db")
    window.commands["search"].trigger()
    panel = window.search_panel
    assert window.pages.current == "search"
    settings = panel.settings
    settings.mode.setCurrentIndex(settings.mode.findData("propose"))
    settings.strategy.setCurrentIndex(settings.strategy.findData("mcts"))
    settings.samples.setValue(3)
    with qtbot.waitSignal(panel.searchStarted, timeout=5000):
        panel.start_button.click()
    session = window.explore.session
    qtbot.waitUntil(
        lambda: session.jobs.get(panel.job_id) is not None and session.jobs[panel.job_id].state == DONE, timeout=120_000
    )
    qtbot.waitUntil(lambda: "Search finished: 3 candidates" in panel.status.text(), timeout=10_000)
    origins = {r["origin"] for r in session.store.results()}
    assert origins == {"search:mcts"} and session.store.db["operators"].count == 3


def test_search_panel_refuses_bad_settings(window, qtbot, tmp_path):
    window.explore.store_path = str(tmp_path / "search.db")
    window.commands["search"].trigger()
    panel = window.search_panel
    panel.settings.mode.setCurrentIndex(panel.settings.mode.findData("propose"))
    panel.settings.template.addItem("missing", str(tmp_path / "missing.json"))
    panel.settings.template.setCurrentIndex(panel.settings.template.count() - 1)
    panel.start_button.click()
    assert panel.status.text().startswith("Cannot start:") and panel.job_id is None


def test_sequence_result_opens_in_the_editor(window, qtbot):
    window.show_page("sequences")
    seq = EXAMPLES / "sequences" / "seq_grouped_conv.json"
    window.sequences.load(seq)
    doc = json.loads((EXAMPLES / "grouped_conv.json").read_text())
    window.sequences.openOperator.emit(doc)
    assert window.document.graph.name == "grouped_conv"
    assert set(window.document.graph.primitive_nodes()) == {"unfold_h", "unfold_w", "grouped_fc"}


def test_export_action_opens_the_dialog_for_the_current_operator(window, qtbot):
    window.load(EXAMPLES / "conv2d.json")
    window.commands["export"].trigger()
    dialog = window.export_dialog
    assert dialog.isVisible()
    dialog.reject()
    QApplication.processEvents()
