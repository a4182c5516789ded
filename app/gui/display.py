"""What the window needs from the desktop before Qt is asked to start it: on X11, Qt's xcb
platform plugin loads only with a few libraries a fresh desktop may lack (libxcb-cursor0
above all), and without them Qt aborts the process with one line. This says which are missing
and the one command that installs them, without importing Qt (`make run` asks it first and
falls back to the headless demo: `python -m app.gui.display`)."""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

#: a library Qt's xcb plugin opens itself (so `ldd` does not list it): its Debian package
DLOPENED = {"xcb-cursor": "libxcb-cursor.so.0"}


def xcb_plugin() -> Path | None:
    """Qt's xcb platform plugin in the installed PySide6 (None if there is none)."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    plugin = Path(next(iter(spec.submodule_search_locations))) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return plugin if plugin.is_file() else None


def missing_libraries(plugin: Path | None, find: Callable[[str], str | None] = ctypes.util.find_library) -> list[str]:
    """The shared libraries (sonames) the xcb plugin needs and this machine lacks."""
    missing = [soname for name, soname in DLOPENED.items() if find(name) is None]
    if plugin is not None:
        try:
            listing = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            listing = ""  # no ldd (not glibc): what Qt opens itself is all that can be checked
        for line in listing.splitlines():
            soname, _, found = line.strip().partition(" => ")
            if found.strip() == "not found" and soname not in missing:
                missing.append(soname)
    return missing


def debian_package(soname: str) -> str:
    """Debian's package for a library: libxcb-cursor.so.0 -> libxcb-cursor0,
    libxkbcommon-x11.so.0 -> libxkbcommon-x11-0 (a name ending in a digit takes a hyphen)."""
    name, _, version = soname.partition(".so.")
    return f"{name}{'-' if name[-1:].isdigit() else ''}{version.split('.')[0]}"


def needs_xcb(environ: Mapping[str, str] = os.environ) -> bool:
    """Qt will pick the xcb plugin: an X display and no other platform asked for (Wayland
    sessions use the wayland plugin, and fall back to xcb only when that cannot load)."""
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.split(":")[0] == "xcb"
    return bool(environ.get("DISPLAY")) and not environ.get("WAYLAND_DISPLAY")


def problem(
    environ: Mapping[str, str] = os.environ, find: Callable[[str], str | None] = ctypes.util.find_library
) -> str | None:
    """Why the window cannot start on this desktop, with the command that fixes it; None if it can."""
    if not needs_xcb(environ):
        return None
    missing = missing_libraries(xcb_plugin(), find)
    if not missing:
        return None
    packages = " ".join(dict.fromkeys(debian_package(s) for s in missing))
    return (
        f"The window needs {', '.join(missing)}, which this machine lacks (Qt's X11 plugin loads only with "
        f"{'it' if len(missing) == 1 else 'them'}). Install with:\n    sudo apt-get install {packages}"
    )


def main() -> int:
    """Exit 0 if the window can start here; else say why and how to fix it, and exit 1."""
    why = problem()
    if why is None:
        return 0
    print(why, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
