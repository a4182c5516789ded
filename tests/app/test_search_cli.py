"""`tessera search`: a strategy's candidates into the store, with progress."""

import json
import subprocess
import sys

from tests.support import EXAMPLES, ROOT

CONV = json.loads((EXAMPLES / "conv2d.json").read_text())


def test_cli_search_prints_progress(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "search",
            "--strategy",
            "mcts",
            "--samples",
            "3",
            "--store",
            str(tmp_path / "c.db"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "[100%] 3 candidates" in out.stdout and "found 3 candidates" in out.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "app.cli", "search", "--template", "nope.json", "--store", str(tmp_path / "c.db")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and "nope.json: no such file" in bad.stderr and "Traceback" not in bad.stderr
