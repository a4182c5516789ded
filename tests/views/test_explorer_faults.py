"""The explorer on a store it may only read (a damaged file, a read-only one), and its workers
ending with the window."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt

from core.ir.serialize import read_document
from core.jobs.processes import pid_alive
from core.jobs.queue import QUEUED, RUNNING, JobQueue
from core.jobs.supervisor import Supervisor
from core.store import Store, StoreReadOnly
from tests.core.job_kinds import TEST_HANDLERS
from tests.store_damage import ROWS, build_store, damage_table
from tests.support import EXAMPLES
from views.explorer.results_table import NAME, WRITES
from views.explorer.session import ExplorerSession
from views.result_columns import COLUMNS


def test_the_window_closing_ends_its_workers_and_their_jobs_are_queued_again(qtbot, store_path):
    with Store(store_path) as store:
        job_id = JobQueue(store).submit("sleep", {"seconds": 600, "steps": 6000})
    session = ExplorerSession(store_path)
    session.supervisor = Supervisor(store_path, workers=1, handlers=TEST_HANDLERS)
    session.supervisor.start()
    qtbot.waitUntil(lambda: session.queue.get(job_id).state == RUNNING, timeout=20_000)
    worker = session.queue.get(job_id).worker_pid
    started = time.monotonic()
    session.shutdown()  # what the window's closeEvent does
    assert time.monotonic() - started < 5  # bounded: the job is not waited for
    assert not pid_alive(worker)
    with Store(store_path) as store:
        job = JobQueue(store).get(job_id)
    assert (job.state, job.attempts) == (QUEUED, 0)
    assert session.rows([1]) == {}  # a repaint while the window closes reads nothing


def test_the_explorer_reads_a_read_only_store(qtbot, store_path):
    with Store(store_path) as store:
        operator = store.add_operator(read_document(EXAMPLES / "conv2d.json"), "conv2d")
        for i in range(5):
            store.add_measurement(operator, None, {"latency_ms": 1.0 + i, "flops": 1e6})
    store_path.chmod(0o444)
    session = ExplorerSession(store_path)
    try:
        qtbot.waitUntil(lambda: session.loaded and session.frame.count == 5, timeout=20_000)
        with pytest.raises(StoreReadOnly, match="the file is read-only"):
            session.rename_operator(operator, "mine")
        session.start_workers()  # refused, with the reason in the status bar
        assert not session.workers_running
    finally:
        session.shutdown()


def test_the_explorer_shows_what_a_damaged_store_still_holds_says_so_and_writes_nothing(
    qtbot, damaged_store, explorer, dialogs
):
    before = damaged_store.read_bytes()
    with Store(damaged_store) as store:  # what `tessera results` and the CSV export read around the damage
        readable = list(store.results())
    assert ROWS * 0.8 < len(readable) < ROWS
    view = explorer.explore.view
    browser = view.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == len(readable) and explorer.is_idle(), timeout=20_000)
    assert sorted(view.session.frame.ids.tolist()) == sorted(r["measurement_id"] for r in readable)
    assert view.plot.toolbar.summary.text().startswith(f"{len(readable):,} results · {len(readable):,} plotted")

    notice = view.notice.text()  # said above the plot, not only in the status bar
    assert view.notice.isVisible()
    assert notice.startswith(f"The results store {damaged_store} is damaged (database disk image is malformed)")
    with Store(damaged_store) as store:
        lost = store.salvaged().note()
    assert lost.startswith("lost: measurements (ids ")
    assert (
        f"shown are the {len(readable):,} results that could still be read ({lost}), and nothing is written" in notice
    )
    assert "Export Results… (CSV)" in notice
    for key in WRITES:  # what would write is offered disabled, saying why
        assert not browser.buttons[key].isEnabled()
        assert "not now, the results store" in browser.buttons[key].toolTip()
    assert not view.panel.accuracy_button.isEnabled()

    # the user filters and sorts what could be read
    browser.filter_edit.setFocus()
    qtbot.keyClicks(browser.filter_edit, "latency < 100")
    expected = sorted((r for r in readable if r["latency_ms"] < 100), key=lambda r: r["latency_ms"])
    qtbot.waitUntil(lambda: browser.model.rowCount() == len(expected) and explorer.is_idle(), timeout=20_000)
    header = browser.table.horizontalHeader()
    latency = [c.key for c in COLUMNS].index("latency_ms")
    centre = QPoint(header.sectionViewportPosition(latency) + header.sectionSize(latency) // 2, header.height() // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    qtbot.waitUntil(explorer.is_idle, timeout=20_000)
    shown = [browser.model.id_at(i) for i in range(browser.model.rowCount())]
    assert shown in ([r["measurement_id"] for r in expected], [r["measurement_id"] for r in expected[::-1]])

    # a click on a row shows its numbers; its name cannot be edited
    table = browser.table
    cell = table.visualRect(browser.model.index(0, NAME)).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    assert view.panel.result_id == shown[0]
    qtbot.keyClick(table, Qt.Key.Key_F2)
    assert table.state() != table.State.EditingState

    # the editor's Tune queues nothing in it either: it says why at once
    explorer.load(EXAMPLES / "conv2d.json")
    explorer.explore.actions["tune"].trigger()
    assert dialogs.calls[-1][:2] == ("warning", "Cannot queue jobs")
    assert dialogs.calls[-1][2].startswith(f"the results store {damaged_store} is damaged")
    assert explorer.explore.dialog is None
    explorer.close()
    assert damaged_store.read_bytes() == before


@pytest.fixture
def operators_lost(store_path, examples_dir) -> Path:
    """A store of ROWS measurements whose operators table's first page is damaged."""
    build_store(store_path, examples_dir)
    damage_table(store_path, "operators")
    return store_path


def test_the_explorer_shows_the_measurements_of_a_store_that_lost_its_operators(qtbot, operators_lost, explorer):
    view = explorer.explore.view
    qtbot.waitUntil(lambda: view.browser.model.rowCount() == ROWS and explorer.is_idle(), timeout=20_000)
    assert "could still be read (lost: operators (every row: its first page is damaged))" in view.notice.text()


def test_the_window_closes_while_the_explorer_is_being_built(qtbot, store_path):
    from app.gui.window import MainWindow

    window = MainWindow(settings=None, store=str(store_path))
    window.show()
    qtbot.waitExposed(window)
    window.show_page("explorer")  # built a piece per turn of the event loop
    assert window.pages.building and window.explore.view is None
    window.close()  # nothing of it runs on after the session is shut (the leak check sees its timer)
    assert not window.pages.building


def test_the_window_on_a_store_it_cannot_open_says_so_without_waiting(qtbot, tmp_path):
    """The error shows in a box the window does not wait on, and in the status bar."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.gui.window import MainWindow

    path = tmp_path / "results.db"
    path.write_bytes(b"these are notes, not a database\n" * 100)
    opening, looks = [True], []

    def look():  # a dialog the window waits on is closed here, or the test would wait for ever
        looks.append(opening[0])
        if opening[0] and QApplication.activeModalWidget() is not None:
            QApplication.activeModalWidget().close()

    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(look)
    timer.start(300)
    window = MainWindow(settings=None, store=str(path))
    opening[0] = False
    try:
        qtbot.waitUntil(lambda: bool(looks), timeout=5_000)
        assert looks == [False], "the window waited on a dialog"
        boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
        assert [b.text() for b in boxes] == [
            f"the results store {path} is not a SQLite database (it starts with b'these are notes,'): "
            "not a Tessera results store; choose another --store"
        ]
        assert window.statusBar().currentMessage() == f"Cannot open the results store: {boxes[0].text()}"
        boxes[0].close()
    finally:
        window.close()
