"""The device manager (Run > Devices…) on real widgets and a real store: add an RPC device,
check it in a worker process (a dead tracker gives a plain error; a real tracker with a
server on loopback reports it free), make it the default, see it in the Evaluate/Tune
dialog, remove it. Only loopback addresses are ever used."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from core.devices import get_device, list_devices
from core.store import Store
from tests.core.rpc_loopback import LOOPBACK, free_port, start_cluster
from tests.support import EXAMPLES
from views.explorer.devices_dialog import HEADERS

pytestmark = pytest.mark.gui
LAST_CHECK = HEADERS.index("Last check")


@pytest.fixture
def window(qtbot, dialogs, tmp_path):
    from app.gui.settings import open_settings
    from app.gui.window import MainWindow

    window = MainWindow(settings=open_settings(tmp_path / "settings.ini"), store=str(tmp_path / "results.db"))
    window.explore.actions["autostart"].setChecked(False)
    window.show()
    qtbot.waitExposed(window)
    yield window
    window.close()


def open_devices(window):
    window.explore.actions["devices"].trigger()
    return window.explore.devices_dialog


def add(qtbot, dialog, name: str, tracker: str, key: str) -> None:
    dialog.name.setText(name)
    dialog.tracker.setText(tracker)
    dialog.key.setText(key)
    dialog.add_button.click()
    qtbot.waitUntil(lambda: not dialog.is_checking(), timeout=90_000)


def row_of(dialog, name: str) -> int:
    return [d.name for d in dialog.devices].index(name)


def test_a_dead_tracker_is_reported_plainly_and_devices_can_be_managed(qtbot, window):
    dialog = open_devices(window)
    assert [d.name for d in dialog.devices] == ["local"]
    dialog.name.setText("bad name!")
    dialog.add_button.click()
    assert "device name 'bad name!' must be" in dialog.status.text()

    port = free_port()  # nothing listens there
    add(qtbot, dialog, "gone", f"{LOOPBACK}:{port}", "rasp4")
    last = dialog.table.item(row_of(dialog, "gone"), LAST_CHECK).text()
    assert f"tracker {LOOPBACK}:{port} refused the connection" in last, last
    assert "refused the connection" in dialog.status.text()

    dialog.table.selectRow(row_of(dialog, "gone"))
    dialog.default_button.click()
    with Store(window.explore.session.path) as store:
        assert get_device(store, "gone").default

    window.load(EXAMPLES / "conv2d.json")
    window.explore.actions["evaluate"].trigger()
    measure = window.explore.dialog
    assert [measure.device.itemData(i) for i in range(measure.device.count())] == ["local", "gone"]
    assert measure.device.currentData() == "gone"  # the default device
    assert "unreachable at the last check" in measure.device.currentText()
    measure.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()

    dialog.table.selectRow(row_of(dialog, "gone"))
    dialog.remove_button.click()
    assert [d.name for d in dialog.devices] == ["local"]
    dialog.table.selectRow(0)
    assert not dialog.remove_button.isEnabled()
    with Store(window.explore.session.path) as store:
        assert [d.name for d in list_devices(store)] == ["local"]


@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_check_then_evaluate_on_a_device_behind_a_real_tracker(qtbot, window, tmp_path):
    """Add a device served on loopback, see it free, evaluate conv2d there from the editor
    and find the result in the browser, filtered by that device."""
    cluster = start_cluster(tmp_path, "loopgui", servers=1)
    try:
        dialog = open_devices(window)
        add(qtbot, dialog, "board", cluster.address, "loopgui")
        row = row_of(dialog, "board")
        assert dialog.table.item(row, HEADERS.index("Servers")).text() == "1 free, 0 busy"
        assert "round trip" in dialog.table.item(row, LAST_CHECK).text()
        assert dialog.status.text() == "board is ready."

        window.load(EXAMPLES / "conv2d.json")
        window.explore.actions["evaluate"].trigger()
        measure = window.explore.dialog
        measure.device.setCurrentIndex(measure.device.findData("board"))
        assert "1 free at the last check" in measure.device.currentText()
        measure.bindings.setPlainText("C_in=8, C_out=8, H=8, W=8, K=3")
        measure.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
        session = window.explore.session
        session.start_workers()
        qtbot.waitUntil(
            lambda: bool(session.jobs) and all(j.state in ("done", "failed") for j in session.jobs.values()),
            timeout=900_000,
        )
        [job] = session.jobs.values()
        assert job.state == "done", job.error
        assert window.explore.monitor.model.data(window.explore.monitor.model.index(0, 3)) == "board"

        window.pages.actions["explorer"].trigger()
        qtbot.waitUntil(window.is_idle, timeout=20_000)  # the page is built a piece at a time
        browser = window.explore.view.browser
        browser.filter_edit.setText("device=board")
        qtbot.waitUntil(lambda: browser.model.rowCount() == 1 and not browser.model.pending, timeout=20_000)
        record = browser.model.record(0)
        assert record["device_name"] == "board" and record["latency_ms"] > 0 and record["torch_latency_ms"] is None
    finally:
        if window.explore.session is not None:
            window.explore.session.stop_workers(grace=1.0)
        assert cluster.stop() == []
