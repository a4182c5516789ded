"""Where the window keeps its state between runs (dock layout, geometry, recent files).

INI files via QSettings: in the user's config folder by default, or at an
explicit path (tests use a temporary file, so they never touch the user's)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

ORGANIZATION = APPLICATION = "Tessera"
RECENT_KEY = "recentFiles"
RECENT_LIMIT = 8


def open_settings(path: str | Path | None = None) -> QSettings:
    if path is not None:
        return QSettings(str(path), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def recent_files(settings: QSettings) -> list[str]:
    value = settings.value(RECENT_KEY, [])
    if isinstance(value, str):  # QSettings returns a one-element list as a plain string
        value = [value]
    return [str(p) for p in value] if isinstance(value, list) else []


def remember_file(settings: QSettings, path: str | Path) -> list[str]:
    """Move `path` to the front of the recent files; returns the new list."""
    path = str(Path(path).resolve())
    paths = [path] + [p for p in recent_files(settings) if p != path]
    settings.setValue(RECENT_KEY, paths[:RECENT_LIMIT])
    return paths[:RECENT_LIMIT]


def forget_recent_files(settings: QSettings) -> None:
    settings.remove(RECENT_KEY)
