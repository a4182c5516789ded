"""The colour schemes: the window follows the desktop (or TESSERA_THEME), both schemes name the
same colours, the style sheet has none left unfilled, and text stays legible on cards and on
the category colours of node headers in either scheme."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from views import theme

pytestmark = pytest.mark.gui


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours."""

    def luminance(color: str) -> float:
        channels = []
        for value in QColor(color).getRgbF()[:3]:
            channels.append(value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4)
        r, g, b = channels
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.fixture
def scheme(qapp):
    """Apply a scheme for one test; the light one comes back after."""
    yield lambda name: theme.apply_theme(qapp, name)
    theme.apply_theme(qapp, "light")


def test_both_schemes_name_the_same_colours_and_fill_the_whole_style_sheet(scheme):
    assert set(theme.SCHEMES["light"]) == set(theme.SCHEMES["dark"])
    for name in theme.SCHEMES:
        scheme(name)
        sheet = QApplication.instance().styleSheet()
        assert not re.findall(r"\{\w+\}", sheet), f"unfilled colours in the {name} style sheet"
        assert theme.SCHEMES[name]["card"] == theme.CARD_BG and theme.SCHEMES[name]["text"] == theme.TEXT


def test_the_dark_scheme_is_dark_and_its_icons_follow_it(scheme):
    scheme("dark")
    window = QApplication.instance().palette().color(QPalette.ColorRole.Window)
    assert window.lightness() < 60
    assert theme.SCHEMES["dark"]["text2"].encode() in theme.icon_svg("open")
    assert not theme.icon("open").isNull() and theme.icon("no-such-icon").isNull()


@pytest.mark.parametrize("name", sorted(theme.SCHEMES))
def test_text_is_legible_in_each_scheme(name):
    colors = theme.SCHEMES[name]
    assert contrast(colors["text"], colors["card"]) >= 7
    assert contrast(colors["muted"], colors["card"]) >= 4.5
    assert contrast(colors["text"], colors["base"]) >= 7
    for category, color in theme.CATEGORY_COLORS.items():  # headers: white on the category colour
        assert contrast("#ffffff", color) >= 3, category


def test_the_desktop_scheme_is_followed_unless_told_otherwise(monkeypatch, qapp):
    monkeypatch.setenv("TESSERA_THEME", "dark")
    assert theme.scheme_of_desktop() == "dark"
    monkeypatch.setenv("TESSERA_THEME", "light")
    assert theme.scheme_of_desktop() == "light"
    monkeypatch.delenv("TESSERA_THEME")
    assert theme.scheme_of_desktop() in theme.SCHEMES  # offscreen reports no scheme: light
