"""Colours, fonts and the application style, in one place so every view agrees.

A quiet theme on Fusion that follows the desktop's colour scheme: light, or dark when the
system is dark (TESSERA_THEME=light|dark overrides). Each scheme is one table of named
colours; the style sheet (resources/style.qss) names them as {name}, and the module's
constants (CANVAS_BG, TEXT, ...) take the scheme's values when apply_theme runs, before any
view is built. The accent colour of each primitive category and the red/amber/blue of
error/warning/pending stay the same in both: white text on them reads in either."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import cast

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from resources import ROOT as RESOURCES

ICONS = RESOURCES / "icons"

CATEGORY_COLORS = {
    "rearrangement": "#0d9488",  # teal
    "view": "#2563eb",  # blue
    "arithmetic": "#d97706",  # amber
    "contraction": "#7c3aed",  # violet
    "blending": "#db2777",  # pink
    "tensor": "#475569",  # slate: the input and output nodes
}
SEVERITY_COLORS = {"error": "#dc2626", "warning": "#d97706", "pending": "#2563eb", "info": "#64748b"}

#: the named colours of each scheme; resources/style.qss refers to them as {name}
SCHEMES: dict[str, dict[str, str]] = {
    "light": {
        "window": "#eef0f3",
        "base": "#ffffff",
        "alt_base": "#f6f7f9",
        "canvas": "#f6f7f9",
        "grid": "#d5dae1",
        "card": "#ffffff",
        "card_error": "#fff5f5",
        "border": "#d0d5dd",
        "line": "#e2e5ea",
        "line2": "#e5e7eb",
        "line3": "#eceef2",
        "panel": "#f3f4f6",
        "header": "#f9fafb",
        "text": "#1f2937",
        "text2": "#374151",
        "text3": "#4b5563",
        "strong": "#111827",
        "muted": "#6b7280",
        "faint": "#9ca3af",
        "accent": "#2563eb",
        "hover": "#eef2ff",
        "hover_border": "#c7d2fe",
        "pressed": "#e0e7ff",
        "checked_text": "#1e3a8a",
        "focus_ring": "#a5b4fc",
        "selection_soft": "#dbeafe",
        "row_hover": "#f1f5f9",
        "error": "#dc2626",
        "error_text": "#b91c1c",
        "warning_text": "#b45309",
        "error_bg": "#fef2f2",
        "accept": "#16a34a",
        "track": "#e5e7eb",
        "diff_added": "#dcfce7",
        "diff_removed": "#fee2e2",
        "diff_blank": "#f3f4f6",
        "syntax_keyword": "#7c3aed",
        "syntax_constant": "#b45309",
        "syntax_decorator": "#0d9488",
        "syntax_name": "#2563eb",
        "syntax_string": "#15803d",
        "syntax_comment": "#6b7280",
    },
    "dark": {
        "window": "#15181c",
        "base": "#1d2127",
        "alt_base": "#23282f",
        "canvas": "#121518",
        "grid": "#2b3138",
        "card": "#1f242b",
        "card_error": "#3a1f22",
        "border": "#3d444d",
        "line": "#2d333b",
        "line2": "#30363d",
        "line3": "#2a2f36",
        "panel": "#262b32",
        "header": "#20252b",
        "text": "#e6edf3",
        "text2": "#c9d1d9",
        "text3": "#aab2bd",
        "strong": "#f0f3f6",
        "muted": "#8b949e",
        "faint": "#6e7681",
        "accent": "#4c8dff",
        "hover": "#253047",
        "hover_border": "#3b4f7a",
        "pressed": "#2a3a5c",
        "checked_text": "#c7dbff",
        "focus_ring": "#58a6ff",
        "selection_soft": "#1f3a66",
        "row_hover": "#232a33",
        "error": "#f85149",
        "error_text": "#ff7b72",
        "warning_text": "#fbbf24",
        "error_bg": "#3a1d1d",
        "accept": "#3fb950",
        "track": "#30363d",
        "diff_added": "#1d3b2a",
        "diff_removed": "#4a2125",
        "diff_blank": "#262b32",
        "syntax_keyword": "#d2a8ff",
        "syntax_constant": "#ffa657",
        "syntax_decorator": "#56d4dd",
        "syntax_name": "#79c0ff",
        "syntax_string": "#7ee787",
        "syntax_comment": "#8b949e",
    },
}

# The current scheme's colours, read by views when they draw (set by apply_theme).
SCHEME = "light"
COLORS = SCHEMES[SCHEME]
CANVAS_BG = COLORS["canvas"]
GRID_DOT = COLORS["grid"]
CARD_BG = COLORS["card"]
CARD_ERROR_BG = COLORS["card_error"]
CARD_BORDER = COLORS["border"]
TEXT = COLORS["text"]
TEXT_MUTED = COLORS["muted"]
SELECTION = COLORS["accent"]
ACCEPT = COLORS["accept"]


def scheme_of_desktop() -> str:
    """'dark' or 'light': TESSERA_THEME if set, else the desktop's colour scheme (light if unknown)."""
    chosen = os.environ.get("TESSERA_THEME", "").strip().lower()
    if chosen in SCHEMES:
        return chosen
    hints = QGuiApplication.styleHints()
    return "dark" if hints is not None and hints.colorScheme() == Qt.ColorScheme.Dark else "light"


def use_scheme(name: str) -> None:
    """Make `name` the current scheme: the module's colour constants take its values."""
    global SCHEME, COLORS, CANVAS_BG, GRID_DOT, CARD_BG, CARD_ERROR_BG, CARD_BORDER, TEXT, TEXT_MUTED, SELECTION
    global ACCEPT
    SCHEME, COLORS = name, SCHEMES[name]
    CANVAS_BG, GRID_DOT, CARD_BG, CARD_ERROR_BG = COLORS["canvas"], COLORS["grid"], COLORS["card"], COLORS["card_error"]
    CARD_BORDER, TEXT, TEXT_MUTED = COLORS["border"], COLORS["text"], COLORS["muted"]
    SELECTION, ACCEPT = COLORS["accent"], COLORS["accept"]


def style_sheet(text: str) -> str:
    """A style sheet with its {name} colours (and {icons}) filled in for the current scheme."""
    values = {**COLORS, "icons": _icon_folder(SCHEME).as_posix()}  # url() paths must be absolute
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def category_color(category: str) -> QColor:
    return QColor(CATEGORY_COLORS.get(category, CATEGORY_COLORS["tensor"]))


def severity_color(severity: str) -> QColor:
    return QColor(SEVERITY_COLORS.get(severity, SEVERITY_COLORS["info"]))


def tint(color: QColor, amount: float) -> QColor:
    """Blend `color` towards white: amount 0 keeps it, 1 gives white."""
    return QColor(
        round(color.red() + (255 - color.red()) * amount),
        round(color.green() + (255 - color.green()) * amount),
        round(color.blue() + (255 - color.blue()) * amount),
    )


def ui_font(point_size: float = 9.0, bold: bool = False) -> QFont:
    font = QFont(QApplication.font())
    font.setPointSizeF(point_size)
    font.setBold(bold)
    return font


def mono_font(point_size: float = 8.5) -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(point_size)
    return font


@cache
def dot_icon(color: str, diameter: int = 10) -> QIcon:
    """A filled circle, used for categories and severities in lists."""
    pixmap = QPixmap(diameter * 2, diameter * 2)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(color))
    painter.drawEllipse(1, 1, diameter - 2, diameter - 2)
    painter.end()
    return QIcon(pixmap)


#: the strokes the icons are drawn with (for the light scheme), and the colours they take in each
ICON_STROKES = {"#374151": "text2", "#4b5563": "text3"}


def icon_svg(name: str) -> bytes:
    """An icon of resources/icons drawn in the current scheme's colours (b"" if missing)."""
    path = ICONS / f"{name}.svg"
    if not path.is_file():
        return b""
    text = path.read_text(encoding="utf-8")
    for stroke, role in ICON_STROKES.items():
        text = text.replace(stroke, COLORS[role])
    return text.encode("utf-8")


def icon(name: str, size: int = 24) -> QIcon:
    """An SVG icon in the current scheme's colours (an empty icon if missing: a typo shows, not crashes);
    Qt derives its greyed disabled look from the pixmap."""
    data = icon_svg(name)
    if not data:
        return QIcon()
    pixmap = QPixmap(size * 2, size * 2)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    QSvgRenderer(QByteArray(data)).render(painter, QRectF(0, 0, size, size))
    painter.end()
    return QIcon(pixmap)


@cache
def _icon_folder(scheme: str) -> Path:
    """The icons the style sheet points to (url()), drawn for `scheme`: resources/icons itself for
    the light scheme, recoloured copies in a folder of this process's for the dark one."""
    if scheme == "light":
        return ICONS
    folder = Path(tempfile.mkdtemp(prefix=f"tessera-icons-{scheme}-"))
    atexit.register(shutil.rmtree, folder, True)
    for path in ICONS.glob("*.svg"):
        (folder / path.name).write_bytes(icon_svg(path.stem))
    return folder


def apply_theme(app: QApplication, scheme: str | None = None) -> None:
    """Fusion, the palette and the style sheet of `scheme` (default: the desktop's)."""
    use_scheme(scheme or scheme_of_desktop())
    app.setStyle("Fusion")
    palette = QPalette()
    c = COLORS
    roles = {
        QPalette.ColorRole.Window: c["window"],
        QPalette.ColorRole.WindowText: c["text"],
        QPalette.ColorRole.Base: c["base"],
        QPalette.ColorRole.AlternateBase: c["alt_base"],
        QPalette.ColorRole.Text: c["text"],
        QPalette.ColorRole.Button: c["header"],
        QPalette.ColorRole.ButtonText: c["text"],
        QPalette.ColorRole.Highlight: c["accent"],
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: c["base"],
        QPalette.ColorRole.ToolTipText: c["text"],
        QPalette.ColorRole.PlaceholderText: c["faint"],
        QPalette.ColorRole.Link: c["accent"],
        QPalette.ColorRole.Mid: c["border"],
    }
    for role, color in roles.items():
        palette.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(c["faint"]))
    app.setPalette(palette)
    font = app.font()
    font.setPointSizeF(9.5)
    app.setFont(font)
    app.setStyleSheet(style_sheet((RESOURCES / "style.qss").read_text(encoding="utf-8")))
    app.setWindowIcon(icon("tessera"))


def application() -> QApplication:
    """The process's QApplication, created and themed on first use."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("Tessera")
        app.setOrganizationName("Tessera")
        app.setDesktopFileName("io.github.tessera.Tessera")
        apply_theme(app)
    return cast(QApplication, app)  # this program makes no other kind
