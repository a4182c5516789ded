"""View > Theme: the desktop's colour scheme, or light or dark whatever the desktop says; kept
in the settings and applied at once: what took its colours when made (icons, the toolbars'
button rules, the canvas and its cards) takes the new ones."""

from __future__ import annotations

from functools import partial

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QApplication, QMenu

from views import theme
from views.editor.canvas import ICON_PROPERTY

from .settings import THEME_KEY, theme_choice

CHOICES = (("system", "&System (follow the desktop)"), ("light", "&Light"), ("dark", "&Dark"))


def add_theme_menu(window, view: QMenu) -> QActionGroup:
    """The Theme menu under `view`, its choice checked; disabled for a window without settings."""
    menu = view.addMenu("&Theme")
    group = QActionGroup(window)
    chosen = theme_choice(window.settings)
    for key, text in CHOICES:
        action = menu.addAction(text, partial(choose_theme, window, key))
        action.setCheckable(True)
        action.setChecked(key == chosen)
        action.setData(key)
        group.addAction(action)
    menu.setEnabled(window.settings is not None)
    return group


def choose_theme(window, key: str) -> None:
    """Keep `key` in the window's settings and use its scheme now."""
    if window.settings is None:  # the menu is disabled then
        return
    window.settings.setValue(THEME_KEY, key)
    scheme = theme.scheme_of_desktop(key if key != "system" else None)
    if scheme != theme.SCHEME:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply_theme(app, scheme)
            restyle(window)
    window.statusBar().showMessage(f"Theme: {key} ({scheme}), in use now", 8000)


def restyle(window) -> None:
    """The scheme changed: what took its colours when made takes the new ones (the style sheet
    and palette did already)."""
    for action in window.findChildren(QAction):
        name = action.property(ICON_PROPERTY)
        if name:
            action.setIcon(theme.icon(name))
    window.toolbars.restyle()
    for item in window.scene.items():
        item.update()
    window.view.viewport().update()
