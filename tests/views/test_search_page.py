"""The Search page runs the discovery loop: settings typed as a user would, Start runs it off the
GUI thread with the stage jobs in the session's workers, the stage counts move while it runs,
Stop cancels cleanly, the same settings resume the run, and bad settings are told in the panel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core.jobs.queue import QUEUED, RUNNING

CTRL = Qt.KeyboardModifier.ControlModifier


def open_search(qtbot, window, tmp_path):
    window.explore.store_path = str(tmp_path / "discover.db")
    qtbot.keyClick(window, Qt.Key.Key_3, CTRL)
    assert window.pages.current == "search"
    return window.search_panel


def type_into(qtbot, box, text: str) -> None:
    """Select a field's text and type over it, then Tab away, as a user does."""
    box.setFocus()
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), text)
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Tab)


def choose(combo, data) -> None:
    combo.setCurrentIndex(combo.findData(data) if combo.findData(data) >= 0 else combo.findText(data))


def tiny_settings(qtbot, panel, candidates: int) -> None:
    """A run of seconds: vgg at width 4 on 8-pixel digits, 100 examples, one epoch of two batches."""
    s = panel.settings
    choose(s.strategy, "canvas")
    choose(s.proxy.backbone, "vgg")
    for box, text in (
        (s.proxy.width_box, "4"),
        (s.proxy.resolution, "8"),
        (s.proxy.epochs, "1"),
        (s.proxy.limit, "100"),
        (s.proxy.batches, "2"),
        (s.fisher_threshold, "0"),
        (s.seed_cap, "4"),  # the test seeds (3), then one more at most
        (s.minutes, "10"),
        (s.candidates, str(candidates)),
    ):
        type_into(qtbot, box, text)
    qtbot.mouseClick(s.tune, Qt.MouseButton.LeftButton)  # no end-to-end tuning
    assert s.proxy.width_box.value() == 4 and s.candidates.value() == candidates and not s.tune.isChecked()


def tile(panel, key: str) -> int:
    return int(panel.counts.numbers[key].text().replace(",", ""))


@pytest.mark.slow
def test_a_discovery_run_shows_its_stages_live_and_the_same_settings_resume_it(qtbot, window, tmp_path):
    panel = open_search(qtbot, window, tmp_path)
    assert panel.settings.discovering and panel.start_button.text() == "Start discovery"
    tiny_settings(qtbot, panel, candidates=2)
    assert panel.resume_hint.text().startswith("Start begins a new run")
    assert "the time limit counts from then" in panel.resume_hint.text()  # training the original is not spent from it
    with qtbot.waitSignal(panel.discoveryStarted, timeout=10_000):
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert window.explore.session.workers_running  # the stages are jobs: workers started with the run
    assert not panel.start_button.isEnabled() and panel.stop_button.isEnabled() and not panel.settings.isEnabled()
    qtbot.waitUntil(lambda: tile(panel, "proposed") >= 1, timeout=60_000)
    time_said = panel.time_label.text()  # the original's training is said, and not spent from the time limit
    assert time_said.startswith("Elapsed") and ("left" in time_said or "the time limit starts once" in time_said)
    window.grab().save(str(tmp_path / "search-running.png"))
    with qtbot.waitSignal(panel.discoveryEnded, timeout=180_000) as ended:
        pass
    summary, error = ended.args
    assert error == "" and summary.counts["proposed"] == 2 and summary.counts["in flight"] == 0
    assert tile(panel, "proposed") == 2 and panel.progress.value() == 1000
    assert panel.status.text().startswith("Finished after") and "resumes" in panel.status.text()
    assert "% proxy (validation) accuracy" in panel.baseline_label.text()  # the original network, trained once
    assert "test accuracy over seeds" in panel.baseline_label.text()  # and tested over the report seeds
    assert panel.start_button.isEnabled() and panel.settings.isEnabled()
    assert panel.resume_hint.text().startswith(f"Start resumes run {summary.run}")

    type_into(qtbot, panel.settings.candidates, "3")  # how many is not what the run is: it resumes
    assert "2 candidate(s) so far" in panel.resume_hint.text()
    with qtbot.waitSignal(panel.discoveryStarted, timeout=10_000):
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert panel.status.text().startswith(f"Resuming run {summary.run}")
    assert tile(panel, "proposed") == 2  # the run's counts so far, before its first round
    with qtbot.waitSignal(panel.discoveryEnded, timeout=180_000) as ended:
        pass
    again, error = ended.args
    assert error == "" and again.run == summary.run and again.counts["proposed"] == 3
    trains = [j for j in window.explore.session.queue.jobs() if j.kind == "train"]
    assert sum(j.operator_name == "conv2d" for j in trains) == 1  # the original network was not trained again


@pytest.mark.slow
def test_stop_cancels_the_run_and_its_jobs(qtbot, window, tmp_path):
    panel = open_search(qtbot, window, tmp_path)
    tiny_settings(qtbot, panel, candidates=0)  # no candidate limit: only the clock (10 min) or Stop ends it
    with qtbot.waitSignal(panel.discoveryStarted, timeout=10_000):
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tile(panel, "proposed") >= 1, timeout=60_000)
    with qtbot.waitSignal(panel.discoveryEnded, timeout=30_000) as ended:
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
        assert panel.status.text().startswith("Stopping")
    summary, error = ended.args
    assert error == "" and panel.status.text().startswith("Stopped after")
    assert panel.start_button.isEnabled() and not panel.stop_button.isEnabled()
    queue = window.explore.session.queue
    assert not [j for j in queue.jobs() if j.state in (QUEUED, RUNNING)]  # nothing left running for the run
    assert summary.counts["proposed"] == tile(panel, "proposed") >= 1
    # the page says what is true now: nothing in flight (the stopped candidates wait to resume), no time left,
    # one duration, and no training said to be under way
    assert summary.counts["in flight"] == 0 and "0 in flight" in panel.counts.others.text()
    took = panel.time_label.text()
    assert took.startswith("Took") and "left" not in took
    assert panel.status.text().startswith(f"Stopped after {took.removeprefix('Took ')}:")
    assert "being trained" not in panel.baseline_label.text()
    assert not panel.counts.numbers["tuned"].isVisibleTo(panel)  # end-to-end timing is off: none is tuned
    assert "tuned" not in panel.status.text()
    shown = panel.progress.value()
    choose(panel.settings.mode, "propose")  # the plain search's own bar and status, not the run's
    assert panel.progress.value() == 0 and not panel.status.text().startswith("Stopped")
    choose(panel.settings.mode, "discover")
    assert panel.progress.value() == shown and panel.status.text().startswith("Stopped after")


def test_bad_settings_are_told_in_the_panel_and_nothing_starts(qtbot, window, tmp_path, dialogs):
    panel = open_search(qtbot, window, tmp_path)
    s = panel.settings
    type_into(qtbot, s.minutes, "0")
    type_into(qtbot, s.candidates, "0")
    assert s.minutes.text() == "no limit" and s.candidates.text() == "no limit"
    assert panel.resume_hint.text() == "Not yet: give a number of candidates or a time limit in minutes"
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert panel.status.text() == "Cannot start: give a number of candidates or a time limit in minutes"
    type_into(qtbot, s.minutes, "5")
    s.proxy.dataset.setFocus()
    s.proxy.dataset.lineEdit().selectAll()
    qtbot.keyClicks(s.proxy.dataset.lineEdit(), str(tmp_path / "no-such-data"))
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert panel.status.text().startswith(f"Cannot start: {tmp_path / 'no-such-data'}: no such file or folder")
    assert panel.status.objectName() == "errorText" and panel.status.isVisible()
    assert panel.run is None and not window.explore.session.workers_running and dialogs.calls == []


def test_propose_only_keeps_the_plain_search(qtbot, window, tmp_path):
    panel = open_search(qtbot, window, tmp_path)
    choose(panel.settings.mode, "propose")
    assert panel.start_button.text() == "Start search"
    assert panel.settings.propose_box.isVisible() and not panel.settings.proxy.isVisible()
    assert not panel.counts.isVisible()


def test_the_page_opens_with_the_last_runs_settings_so_that_start_resumes_it(qtbot, window, tmp_path):
    """After a restart the settings are the store's last run's, as the page promises."""
    from core.data.datasets import DEFAULT_DATASET
    from core.ir.serialize import read_document
    from core.search.settings import DiscoveryConfig
    from core.store import Store
    from core.store.searches import open_run
    from tests.support import EXAMPLES

    cfg = DiscoveryConfig.of(
        read_document(EXAMPLES / "conv2d.json"),
        "vgg",
        5,
        proxy={"dataset": DEFAULT_DATASET, "width": 4, "resolution": 8, "epochs": 1, "theta": 0.5, "limit": 100}
        | {"max_batches": 2},  # as the page writes them, so that its settings make the same run
        deploy={"trials": 3},
        strategy="canvas",
        minutes=7.0,
        margin=0.02,
        test_seeds=2,
        seed_cap=4,
        tune=False,
    )
    with Store(tmp_path / "discover.db") as store:
        run = open_run(store, cfg.key, "an earlier run", cfg.to_dict())
    panel = open_search(qtbot, window, tmp_path)
    s = panel.settings
    assert s.discovering and s.strategy.currentData() == "canvas" and s.seed.value() == 5
    assert s.proxy.backbone.currentText() == "vgg" and s.proxy.width_box.value() == 4 and s.proxy.limit.value() == 100
    assert s.minutes.value() == 7 and s.margin.value() == 2.0 and s.test_seeds.value() == 2 and not s.tune.isChecked()
    assert s.seed_cap.value() == 4  # the run's seed rule: its cap is part of its key
    assert panel.resume_hint.text().startswith(f"Start resumes run {run.id} (an earlier run)")


def test_stopping_a_plain_search_keeps_what_it_found(qtbot, window, tmp_path):
    panel = open_search(qtbot, window, tmp_path)
    choose(panel.settings.mode, "propose")
    panel.settings.samples.setValue(100_000)
    with qtbot.waitSignal(panel.searchStarted, timeout=10_000):
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: " candidates, " in panel.status.text(), timeout=60_000)
    qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.status.text().startswith("Search stopped"), timeout=30_000)
    assert " candidates, " in panel.status.text()  # "Search stopped: 70 candidates, 0 scored, 0 queued"
