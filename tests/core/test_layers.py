"""The rooms stay apart: core/ is usable without Qt, its packages import only the layers below
them (pyproject's import-linter contracts, which must catch a wrong import), and no module of
core is part of an import cycle (lazy imports inside functions included)."""

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx

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


def test_no_module_of_core_is_in_an_import_cycle():
    graph = grimp.build_graph("core", cache_dir=None)
    imports = nx.DiGraph()
    for module in graph.modules:
        imports.add_edges_from((module, imported) for imported in graph.find_modules_directly_imported_by(module))
    cycles = [sorted(c) for c in nx.strongly_connected_components(imports) if len(c) > 1]
    assert not cycles, f"import cycles in core: {cycles}"


def test_the_layer_contract_catches_an_import_that_runs_back_up(tmp_path: Path):
    for part in ("core", "views", "app"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    lint = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"]
    kept = subprocess.run(lint, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert kept.returncode == 0, kept.stdout
    graph = tmp_path / "core" / "ir" / "graph.py"
    graph.write_text(graph.read_text() + "\nfrom core.store import Store  # noqa\n")
    broken = subprocess.run(lint, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert broken.returncode == 1
    assert "core's packages in layers: each imports only those below it BROKEN" in broken.stdout
    assert "core.ir.graph -> core.store" in broken.stdout
