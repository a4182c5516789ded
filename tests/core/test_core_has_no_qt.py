"""core/ must stay usable without Qt: importing every module under it pulls in no PySide6 or pyqtgraph."""

import subprocess
import sys

from tests.support import ROOT

SCRIPT = """
import importlib, pkgutil, sys
import core
for info in pkgutil.walk_packages(core.__path__, "core."):
    importlib.import_module(info.name)
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6"))
print("\\n".join(bad))
"""


def test_core_imports_no_qt():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"core pulls in Qt modules: {out.stdout}"
