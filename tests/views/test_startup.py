"""Start-up in fresh processes: the window never imports torch or TVM, and
`tessera gui --screenshot` writes a PNG of the whole window and exits 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from views.theme import RESOURCES

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}

PROBE = """
import json, sys
from views.theme import application
from app.gui.window import MainWindow
app = application()
window = MainWindow(settings=None)
window.show()
window.load(sys.argv[1])
app.processEvents()
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'tvm', 'tvm_ffi'})
print(json.dumps({'heavy': heavy, 'nodes': len(window.document.graph.primitive_nodes())}))
window.close()
"""


def run(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout)


def test_window_does_not_import_torch_or_tvm():
    result = run([sys.executable, "-c", PROBE, str(RESOURCES / "examples" / "involution.json")])
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"heavy": [], "nodes": 10}


def test_cli_screenshot_writes_the_whole_window(tmp_path):
    from PySide6.QtGui import QImage

    out = tmp_path / "shots" / "involution.png"
    result = run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "gui",
            str(RESOURCES / "examples" / "involution.json"),
            "--store",
            str(tmp_path / "results.sqlite"),
            "--screenshot",
            str(out),
        ]
    )
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1600, 1000)
    assert f"saved {out}" in result.stdout


def test_cli_screenshot_of_a_bad_file_fails_with_a_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tessera.operator", "version": 99}')
    result = run([sys.executable, "-m", "app.cli", "gui", str(bad), "--screenshot", str(tmp_path / "x.png")])
    assert result.returncode == 1
    assert "tessera gui:" in result.stderr and "bad.json" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.png").exists()


def test_cli_screenshot_of_a_bad_file_stops_the_store_reader_on_the_way_out(tmp_path):
    """With a store, the window's reader thread runs when the file is refused: stopped and
    waited for, not destroyed running (which aborted the process, exit 134)."""
    from core.store import Store

    store = tmp_path / "results.db"
    Store(store).close()
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tessera.operator"')
    result = run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "gui",
            str(bad),
            "--store",
            str(store),
            "--screenshot",
            str(tmp_path / "x.png"),
        ],
        timeout=60,
    )
    assert result.returncode == 1 and f"tessera gui: {bad}: not valid JSON" in result.stderr
    assert "QThread" not in result.stderr


def test_cli_screenshot_on_a_store_it_cannot_open_says_why(tmp_path):
    """No dialog waits for a press nobody makes: the error, as the command line says it (here of a
    truncated store; a garbage file, a zeroed header or a folder take the same way)."""
    from core.store import Store

    store = tmp_path / "results.db"
    Store(store).close()
    with open(store, "r+b") as f:
        f.truncate(1000)
    out = tmp_path / "x.png"
    result = run([sys.executable, "-m", "app.cli", "gui", "--store", str(store), "--screenshot", str(out)], timeout=60)
    assert result.returncode == 1, result.stderr
    assert f"tessera gui: cannot open the results store {store}" in result.stderr
    assert not out.exists()


def test_cli_screenshot_of_a_store_with_queued_jobs_leaves_them_and_asks_nothing(tmp_path):
    """A picture of a store whose jobs wait: no worker starts on them (they ran, unasked, and the
    window then waited for an answer to "let the jobs finish?" that nobody could give)."""
    from core.jobs.queue import QUEUED, JobQueue
    from core.store import Store

    store = tmp_path / "results.db"
    with Store(store) as opened:
        JobQueue(opened).submit(
            "measure", {"operator": json.loads((RESOURCES / "examples" / "conv2d.json").read_text())}
        )
    before = store.read_bytes()
    out = tmp_path / "explorer.png"
    command = [sys.executable, "-m", "app.cli", "gui", "--store", str(store), "--view", "explorer"]
    result = run([*command, "--screenshot", str(out)], timeout=90)
    assert result.returncode == 0, result.stderr
    assert out.is_file() and store.read_bytes() == before
    with Store(store, reading=True) as opened:
        assert [job.state for job in JobQueue(opened).jobs()] == [QUEUED]
