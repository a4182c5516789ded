"""Colours, fonts and the application style, in one place so every view agrees.

A light, quiet theme: Fusion with a neutral palette, one accent colour per
primitive category, red/amber/blue for error/warning/pending diagnostics."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QApplication

import resources

RESOURCES = Path(resources.__file__).resolve().parent
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

CANVAS_BG = "#f6f7f9"
GRID_DOT = "#d5dae1"
CARD_BG = "#ffffff"
CARD_BORDER = "#d0d5dd"
TEXT = "#1f2937"
TEXT_MUTED = "#6b7280"
SELECTION = "#2563eb"
ACCEPT = "#16a34a"


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


def icon(name: str) -> QIcon:
    """An SVG icon from resources/icons (empty icon if missing, so a typo shows, not crashes)."""
    return QIcon(str(ICONS / f"{name}.svg"))


def apply_theme(app: QApplication) -> None:
    app.setStyle("Fusion")
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#eef0f3",
        QPalette.ColorRole.WindowText: TEXT,
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f6f7f9",
        QPalette.ColorRole.Text: TEXT,
        QPalette.ColorRole.Button: "#f8f9fb",
        QPalette.ColorRole.ButtonText: TEXT,
        QPalette.ColorRole.Highlight: SELECTION,
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#ffffff",
        QPalette.ColorRole.ToolTipText: TEXT,
        QPalette.ColorRole.PlaceholderText: "#9ca3af",
        QPalette.ColorRole.Link: SELECTION,
        QPalette.ColorRole.Mid: CARD_BORDER,
    }
    for role, color in roles.items():
        palette.setColor(role, QColor(color))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#9ca3af"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor("#9ca3af"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#9ca3af"))
    app.setPalette(palette)
    font = app.font()
    font.setPointSizeF(9.5)
    app.setFont(font)
    style = (RESOURCES / "style.qss").read_text(encoding="utf-8")
    app.setStyleSheet(style.replace("{icons}", ICONS.as_posix()))  # url() paths must be absolute
    app.setWindowIcon(icon("tessera"))
