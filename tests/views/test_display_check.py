"""The check `make run` and `tessera gui` make before Qt starts the window: on X11 the libraries
Qt's xcb plugin needs (libxcb-cursor0 first), named with the command that installs them."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

from app.gui import display
from tests.support import ROOT

NO_CURSOR = {"xcb-cursor": None}.get  # a machine without libxcb-cursor0


def test_debian_packages_of_the_libraries():
    assert display.debian_package("libxcb-cursor.so.0") == "libxcb-cursor0"
    assert display.debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"
    assert display.debian_package("libxcb-icccm.so.4.0.0") == "libxcb-icccm4"


def test_a_machine_without_libxcb_cursor_is_told_the_command_that_installs_it():
    why = display.problem({"DISPLAY": ":0"}, find=NO_CURSOR)
    assert why is not None and "libxcb-cursor.so.0" in why
    assert "sudo apt-get install libxcb-cursor0" in why
    assert display.problem({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, find=NO_CURSOR) is None
    assert display.problem({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, find=NO_CURSOR) is None
    assert display.problem({"QT_QPA_PLATFORM": "xcb"}, find=NO_CURSOR) is not None


def test_what_the_plugin_lacks_here_really_cannot_be_loaded():
    plugin = display.xcb_plugin()
    if plugin is None:
        pytest.skip("this PySide6 has no xcb plugin")
    lacking = display.missing_libraries(plugin, find=lambda name: f"lib{name}.so.0")
    for soname in lacking:  # each one named is one the dynamic loader cannot find
        with pytest.raises(OSError, match="cannot open shared object file"):
            ctypes.CDLL(soname)
    assert display.missing_libraries(plugin, find=NO_CURSOR)[0] == "libxcb-cursor.so.0"


def test_the_command_make_run_asks_first(monkeypatch):
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":99"
    done = subprocess.run(
        [sys.executable, "-m", "app.gui.display"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    why = display.problem(env)
    assert done.returncode == (0 if why is None else 1)
    assert (why or "") in done.stderr and "Traceback" not in done.stderr
    makefile = (ROOT / "Makefile").read_text()
    assert "-m app.gui.display; then $(BIN)/tessera;" in makefile and "tessera demo; fi" in makefile


def test_tessera_gui_says_what_is_missing_instead_of_qt_aborting(monkeypatch):
    from app.gui import main

    monkeypatch.setattr(display, "problem", lambda: "The window needs libxcb-cursor.so.0 ... sudo apt-get install")
    with pytest.raises(main.DisplayError, match="sudo apt-get install(.|\n)*tessera demo"):
        main.run()
