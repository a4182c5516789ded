"""The main window's commands (each with every platform's shortcuts and its icon) and its menu
bar: File, Edit, View and Run, with Open Recent filled each time it opens."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

from views import theme
from views.editor.canvas import ICON_PROPERTY, canvas_actions
from views.editor.document import TEMPLATES

from .file_commands import open_dialog, open_export, save, save_as
from .page_commands import delete_selected, redo, undo
from .panels import current_export
from .settings import forget_recent_files, recent_files
from .theming import add_theme_menu

if TYPE_CHECKING:
    from .window import MainWindow


def make_actions(window: MainWindow) -> dict[str, QAction]:
    def action(text, slot, shortcuts=(), icon_name=None):
        a = QAction(text, window)
        keys = [
            key
            for s in shortcuts
            for key in (QKeySequence.keyBindings(s) if isinstance(s, QKeySequence.StandardKey) else [QKeySequence(s)])
        ]
        a.setShortcuts(list({k.toString(): k for k in keys if not k.isEmpty()}.values()))  # each binding once
        if icon_name:
            a.setIcon(theme.icon(icon_name))
            a.setProperty(ICON_PROPERTY, icon_name)  # drawn again in another theme
        a.triggered.connect(slot)
        return a

    K = QKeySequence.StandardKey
    actions = {
        "new": action("&New", window.new_document, [K.New], "new"),
        "open": action("&Open…", lambda: open_dialog(window), [K.Open], "open"),
        "save": action("&Save", lambda: save(window), [K.Save], "save"),
        "save_as": action("Save &As…", lambda: save_as(window), [K.SaveAs]),
        "quit": action("&Quit", window.close, [K.Quit, "Ctrl+Q"]),
        "undo": action("&Undo", lambda: undo(window), [K.Undo], "undo"),
        # every platform's binding: Ctrl+Shift+Z (the standard on Linux and macOS) and Ctrl+Y (Windows)
        "redo": action("&Redo", lambda: redo(window), [K.Redo, "Ctrl+Shift+Z", "Ctrl+Y"], "redo"),
        "start": action("&Start Page", window.show_start_page),
        "export": action("&Export…", lambda: open_export(window, current_export(window)), ["Ctrl+E"]),
        "search": action("&Search…", lambda: window.show_page("search")),
    }
    actions["new"].setStatusTip("A new operator: a 1x1 convolution to build on")
    actions["export"].setStatusTip("Export the operator: PyTorch, TVMScript, library, JSON, pictures")
    actions["search"].setStatusTip(
        "Discover operators faster than the template at equal accuracy, or let a strategy propose some"
    )
    actions.update(canvas_actions(window.view, delete=lambda: delete_selected(window)))
    for a in actions.values():
        a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    return actions


def make_menus(window: MainWindow) -> None:
    a = window.commands
    file_menu = window.menuBar().addMenu("&File")
    file_menu.addAction(a["new"])
    templates = file_menu.addMenu("New from &Template")
    for key, (name, text) in TEMPLATES.items():
        template = templates.addAction(name, partial(window.new_from_template, key))
        template.setStatusTip(text)
    file_menu.addAction(a["open"])
    window.recent_menu = file_menu.addMenu("Open &Recent")
    window.recent_menu.aboutToShow.connect(lambda: fill_recent_menu(window))
    window.recent_menu.setEnabled(window.settings is not None)
    file_menu.addSeparator()
    file_menu.addActions([a["save"], a["save_as"]])
    file_menu.addSeparator()
    file_menu.addAction(a["export"])
    file_menu.addAction(a["quit"])
    edit = window.menuBar().addMenu("&Edit")
    edit.addActions([a["undo"], a["redo"]])
    edit.addSeparator()
    edit.addActions([a["delete"], a["select_all"]])
    view = window.view_menu = window.menuBar().addMenu("&View")
    window.pages_menu = view.addMenu("&Pages")
    view.addAction(a["start"])
    view.addSeparator()
    view.addActions([a["zoom_in"], a["zoom_out"], a["zoom_fit"]])
    view.addSeparator()
    view.addAction(a["layout"])
    view.addSeparator()
    window.theme_actions = add_theme_menu(window, view)
    view.addSeparator()
    for dock in window.docks.values():
        view.addAction(dock.toggleViewAction())
    run = window.menuBar().addMenu("&Run")
    e = window.explore.actions
    run.addActions([e["evaluate"], e["tune"], e["transfer"], e["accuracy"]])
    run.addSeparator()
    run.addActions([e["jobs"], e["workers"], e["autostart"], e["runner"], e["devices"]])
    run.addSeparator()
    run.addAction(a["search"])


def fill_recent_menu(window: MainWindow) -> None:
    window.recent_menu.clear()
    settings = window.settings
    if settings is None:  # the menu is disabled then
        return
    paths = recent_files(settings)
    for path in paths:
        action = window.recent_menu.addAction(Path(path).name, partial(window.open_file, path))
        action.setToolTip(path)
        action.setEnabled(Path(path).exists())
    if paths:
        window.recent_menu.addSeparator()
        window.recent_menu.addAction("Clear list", partial(forget_recent_files, settings))
    else:
        window.recent_menu.addAction("No recent files").setEnabled(False)
