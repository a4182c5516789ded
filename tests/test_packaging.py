"""Desktop integration and the PyInstaller build recipe: the .desktop file and AppStream
metainfo agree with each other and pass their freedesktop validators (installed by the
Makefile set-up where it can), the icon is a real SVG, the spec file loads (with stand-ins for
PyInstaller's hooks) and bundles what worker processes import by name, and the frozen
program's launcher runs `-m module` as TVM's pool workers need. The build itself runs in
`make package` (minutes, a gigabyte), not here."""

from __future__ import annotations

import configparser
import ctypes.util
import importlib.metadata
import importlib.util
import pkgutil
import shutil
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import ClassVar

import pytest

from tests.support import ROOT

PACKAGING = ROOT / "packaging"
APP_ID = "io.github.tessera.Tessera"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
ICON = ROOT / "resources" / "icons" / "tessera.svg"


def _desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive
    parser.read_string(DESKTOP.read_text(encoding="utf-8"))
    assert parser.sections() == ["Desktop Entry"]
    return parser["Desktop Entry"]


def test_desktop_file_launches_tessera_with_its_icon():
    entry = _desktop_entry()
    assert entry["Type"] == "Application" and entry["Name"] == "Tessera"
    assert entry["Exec"] == "tessera gui %f" and entry["Terminal"] == "false"
    assert entry["Icon"] == APP_ID
    assert entry["Categories"].endswith(";") and "Science" in entry["Categories"].split(";")
    assert entry["StartupWMClass"] == "tessera"


def test_metainfo_describes_the_same_application():
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.find("launchable").get("type") == "desktop-id" and root.findtext("launchable") == DESKTOP.name
    assert root.findtext("provides/binary") == "tessera"
    assert root.findtext("metadata_license") == "CC0-1.0" and root.findtext("project_license") == "Apache-2.0"
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()
    assert "Apache License" in (ROOT / "packaging" / "LICENSE").read_text()
    assert root.findtext("name") == _desktop_entry()["Name"]
    assert len(root.findtext("summary")) < 80 and root.find("description/p") is not None
    version = root.find("releases/release").get("version")
    assert f'version = "{version}"' in (ROOT / "pyproject.toml").read_text()


def test_the_icon_is_a_square_svg():
    root = ET.parse(ICON).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("width") == root.get("height") and root.get("viewBox") == "0 0 64 64"


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None,
    reason="desktop-file-validate is not installed (Debian: desktop-file-utils)",
)
def test_desktop_file_validator_accepts_it():
    run = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True)
    assert run.returncode == 0 and not run.stdout.strip(), run.stdout + run.stderr  # no errors, warnings or hints


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstreamcli is not installed (Debian: appstream)")
def test_appstream_validator_accepts_the_metainfo():
    run = subprocess.run(["appstreamcli", "validate", "--no-net", str(METAINFO)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "W:" not in run.stdout and "E:" not in run.stdout


class _Recorded:
    """Stands in for PyInstaller's build steps: keeps what the spec passes to them."""

    made: ClassVar[dict] = {}

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        _Recorded.made[type(self).__name__] = self
        self.pure, self.scripts, self.binaries, self.datas = [], [], [], []


def _stand_in_hooks() -> types.ModuleType:
    """PyInstaller's hook helpers as the spec uses them, without PyInstaller (a packaging tool that
    `make package` installs, not `make test`): our packages' submodules and the files of the
    resources package as they are on disk, TVM's libraries by name; all of TVM's submodules would
    take minutes to list, and the `make package` smoke test runs the real hooks."""
    hooks = types.ModuleType("PyInstaller.utils.hooks")

    def collect_submodules(package: str, filter=lambda name: True) -> list[str]:
        if package not in ("app", "core", "views"):
            return [f"{package} (all submodules)"]
        found = [m.name for m in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}.")]
        return [package, *(name for name in found if filter(name))]

    def collect_data_files(package: str) -> list[tuple[str, str]]:
        if package != "resources":
            return []
        files = (f for f in (ROOT / package).rglob("*") if f.is_file() and f.suffix not in (".py", ".pyc"))
        return [(str(f), str(f.parent.relative_to(ROOT))) for f in files]

    def collect_dynamic_libs(package: str) -> list[tuple[str, str]]:
        module = importlib.util.find_spec(package)
        folder = Path(module.origin).parent if module and module.origin else None
        return [(str(f), str(f.parent.relative_to(folder.parent))) for f in folder.rglob("*.so")] if folder else []

    def copy_metadata(name: str) -> list[tuple[str, str]]:
        folder = Path(importlib.metadata.distribution(name)._path)  # the installed dist-info folder
        return [(str(folder), folder.name)]

    hooks.collect_submodules, hooks.collect_data_files, hooks.collect_dynamic_libs, hooks.copy_metadata = (
        collect_submodules,
        collect_data_files,
        collect_dynamic_libs,
        copy_metadata,
    )
    return hooks


def test_the_spec_file_loads_and_bundles_what_workers_import_by_name(monkeypatch):
    for name in ("PyInstaller", "PyInstaller.utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", _stand_in_hooks())
    steps = {name: type(name, (_Recorded,), {}) for name in ("Analysis", "PYZ", "EXE", "COLLECT")}
    spec = PACKAGING / "tessera.spec"
    namespace = {"SPECPATH": str(PACKAGING), **steps}
    exec(compile(spec.read_text(), str(spec), "exec"), namespace)
    analysis = _Recorded.made["Analysis"]
    (script,) = analysis.args[0]
    assert Path(script) == PACKAGING / "launcher.py" and Path(script).is_file()
    hidden = set(analysis.kwargs["hiddenimports"])
    assert {
        "views.export_files",
        "views.editor.code_worker",
        "core.compile.handlers",
        "core.export.tvm_export",
        "views.pictures",
        "tvm (all submodules)",
        "tvm_ffi (all submodules)",
    } <= hidden
    datas = {Path(dest) / Path(src).name for src, dest in analysis.kwargs["datas"]}
    assert {
        Path("resources/examples/conv2d.json"),
        Path("resources/icons/tessera.svg"),
        Path("resources/style.qss"),
    } <= datas
    assert any(Path(src).name.startswith("libtvm") for src, _ in analysis.kwargs["binaries"])
    # the library Qt's xcb plugin opens itself travels with the window, where this machine has it
    cursor = ctypes.util.find_library("xcb-cursor") is not None
    assert any(Path(src).name == "libxcb-cursor.so.0" for src, _ in analysis.kwargs["binaries"]) == cursor
    # the package's metadata, whose entry points declare the job kinds
    (metadata,) = [Path(src) for src, _ in analysis.kwargs["datas"] if Path(src).name.startswith("tessera-")]
    assert "[tessera.job_kinds]" in (metadata / "entry_points.txt").read_text()
    assert analysis.kwargs["module_collection_mode"]["tvm"] == "pyz+py"  # TVMScript reads its own source
    assert _Recorded.made["COLLECT"].kwargs["name"] == "tessera" and _Recorded.made["EXE"].kwargs["name"] == "tessera"
    # what the bundle leaves out: torch's tests and tools but the one its multiprocessing starts
    used = namespace["used"]
    assert [
        used((dest, "src", "DATA")) for dest in ("torch/test/atest", "torch/bin/protoc", "torch/include/c10.h")
    ] == [False] * 3
    assert not used(("torch/lib/libtorchbind_test.so", "src", "BINARY"))
    assert used(("torch/bin/torch_shm_manager", "src", "BINARY"))
    assert used(("tvm/lib/libtvm_compiler.so", "src", "BINARY")) and used(("PySide6/Qt/lib/libQt6Core.so.6", "s", "B"))


def test_the_launcher_runs_the_cli_and_python_dash_m(tmp_path):
    launcher = PACKAGING / "launcher.py"
    run = subprocess.run(
        [sys.executable, str(launcher), "validate", str(ROOT / "resources/examples/conv2d.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout.startswith("ok "), run.stderr
    (tmp_path / "m.json").write_text('{"b": 1, "a": [2]}')
    run = subprocess.run(
        [sys.executable, str(launcher), "-m", "json.tool", "--sort-keys", str(tmp_path / "m.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and run.stdout.splitlines()[:2] == ["{", '    "a": ['], run.stderr
