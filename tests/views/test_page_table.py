"""app.page_table is the one list of the window's pages: the window has exactly its pages, in
its order, with its titles and shortcuts, and shows each; `tessera gui --view` offers each; the
pages built on first show are the ones whose modules the window imports ahead. A page added to
the window or the command line by hand, or dropped from either, fails here."""

from __future__ import annotations

import importlib

import pytest

from app.cli import build_parser
from app.page_table import PAGE_KEYS, PAGES
from tests.test_docs import subcommands

pytestmark = pytest.mark.gui


def test_the_window_has_the_tables_pages_and_shows_each(qtbot, window, store_path):
    window.explore.store_path = str(store_path)
    window.explore.actions["autostart"].setChecked(False)
    assert list(window.pages.pages) == list(PAGE_KEYS)
    for row in PAGES:
        action = window.pages.actions[row.key]
        assert (action.text(), action.shortcut().toString()) == (row.title, row.shortcut)
        assert action in window.pages_menu.actions(), f"the View menu lacks the {row.key} page"
        assert window.show_page(row.key), f"the {row.key} page could not be shown"
        qtbot.waitUntil(window.is_idle, timeout=20_000)  # a page may be built a piece at a time
        assert window.pages.current == row.key
        assert window.page_stack.currentWidget() is window.pages.widget(row.key)
    assert len({row.shortcut for row in PAGES}) == len(PAGES), "two pages share a shortcut"


def test_pages_built_on_first_show_are_imported_ahead(window):
    for row in PAGES:
        built_later = window.pages.pages[row.key].build is not None
        assert built_later == (row.module is not None), f"{row.key}: module {row.module}"
        if row.module:
            importlib.import_module(row.module)


def test_gui_view_offers_every_page():
    view = subcommands(build_parser())["gui"]._option_string_actions["--view"]
    assert tuple(view.choices) == PAGE_KEYS
