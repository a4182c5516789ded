"""The window's pages, in one Qt-free table: the window adds them in this order (app.gui.window),
`tessera gui --view` offers their keys (app.cli.gui), the window imports the modules of those
built on first show ahead of time, and the tests visit each. A new page is a row here and its
widget (or build) in app.gui.window."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageRow:
    key: str  # `tessera gui --view KEY`, window.show_page(KEY)
    title: str  # the toolbar button and View menu entry, with its mnemonic (&)
    shortcut: str
    tip: str  # the button's tool tip
    status: str = ""  # what the status bar says on arrival (default: the tip)
    #: for a page built on first show, the module its build imports, imported in the background
    #: when the window starts so the first switch to it does not stall the window
    module: str | None = None


#: the order of the work: draw, transform, search, compare, browse
PAGES = (
    PageRow(
        "editor",
        "&Editor",
        "Ctrl+1",
        "Draw and edit the operator",
        "Drag a primitive from the palette onto the canvas; drag from an output port to an input port to connect.",
    ),
    PageRow("sequences", "&Sequences", "Ctrl+2", "Loop-transformation sequences on a loop nest"),
    PageRow(
        "search",
        "Searc&h",
        "Ctrl+3",
        "Discover operators: screen, train and time a strategy's candidates, or only propose them",
        module="views.search.search_panel",
    ),
    PageRow(
        "explorer",
        "E&xplorer",
        "Ctrl+4",
        "The Pareto plot and every result in the store",
        "Hover a point for its numbers; click selects, double-click opens it in the editor; "
        "Shift+drag selects a rectangle; wheel zooms.",
        module="views.explorer.explorer_view",
    ),
    PageRow("gallery", "&Gallery", "Ctrl+5", "The store's operators as pictures", module="views.gallery"),
)
PAGE_KEYS = tuple(row.key for row in PAGES)
BY_KEY = {row.key: row for row in PAGES}
