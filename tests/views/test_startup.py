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
