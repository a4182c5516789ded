"""How long `tessera` takes to show its window, measured in fresh processes.

Figure 1: process start -> main window exposed with involution.json loaded,
going through the same entry point as `tessera` (the CLI parser is built first).
Figure 2: a whole `tessera gui FILE --screenshot OUT` run, start to exit.
Target: under 2 s for figure 1 on the development machine."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "involution.json"
TARGET_S = 2.0
RUNS = 3
ENV = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}

CHILD = """
import json, sys, time
import psutil
started = psutil.Process().create_time()
import app.cli
app.cli.build_parser("gui")                 # what `tessera` does before dispatching to the window
from views.theme import application
from app.gui.window import MainWindow
qapp = application()
window = MainWindow(settings=None)
window.load(sys.argv[1])
window.show()
while not (window.windowHandle() and window.windowHandle().isExposed()):
    qapp.processEvents()
qapp.processEvents()
shown = time.time() - started
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'tvm'})
print(json.dumps({"shown": shown, "heavy": heavy}))
window.close()
"""


def time_to_window() -> tuple[float, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(EXAMPLE)], cwd=ROOT, env=ENV, capture_output=True, text=True, check=True
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    return report["shown"], report["heavy"]


def screenshot_run() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "app.cli", "gui", str(EXAMPLE), "--screenshot", str(Path(tmp) / "shot.png")],
            cwd=ROOT,
            env=ENV,
            capture_output=True,
            check=True,
        )
        return time.perf_counter() - start


def main() -> int:
    shown, heavy = zip(*(time_to_window() for _ in range(RUNS)))
    whole = [screenshot_run() for _ in range(RUNS)]
    median = statistics.median(shown)
    print(
        f"window shown (process start -> exposed, involution.json): median {median:.2f} s "
        f"over {RUNS} runs ({', '.join(f'{s:.2f}' for s in shown)})"
    )
    print(f"  ratio to the {TARGET_S:.0f} s target: {median / TARGET_S:.2f}")
    print(f"  torch/tvm imported by the GUI process: {sorted(set().union(*heavy)) or 'none'}")
    print(f"whole `tessera gui FILE --screenshot` run: median {statistics.median(whole):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
