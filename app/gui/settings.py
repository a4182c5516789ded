"""Where the window keeps its state between runs (dock layout, geometry, recent files, the
folder last saved to, the colour theme).

INI files via QSettings: in the user's config folder by default, or at an
explicit path (tests use a temporary file, so they never touch the user's)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

ORGANIZATION = APPLICATION = "Tessera"
RECENT_KEY = "recentFiles"
RECENT_LIMIT = 8
THEME_KEY = "view/theme"  # 'system' (the desktop's scheme), 'light' or 'dark'
THEMES = ("system", "light", "dark")
FOLDER_KEY = "lastFolder"  # where the user last saved or exported: Save As and Export start there


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


def last_folder(settings: QSettings | None) -> Path | None:
    """The folder the user last saved to (None if none yet, or it is gone)."""
    value = settings.value(FOLDER_KEY) if settings is not None else None
    return Path(str(value)) if value and Path(str(value)).is_dir() else None


def remember_folder(settings: QSettings, folder: str | Path) -> None:
    settings.setValue(FOLDER_KEY, str(Path(folder).resolve()))


def documents_folder() -> Path:
    """The user's documents folder (their home if the desktop names none)."""
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(location) if location and Path(location).is_dir() else Path.home()


def theme_choice(settings: QSettings | None) -> str:
    """The theme the user chose: 'system', 'light' or 'dark'."""
    value = str(settings.value(THEME_KEY, "system")) if settings is not None else "system"
    return value if value in THEMES else "system"
