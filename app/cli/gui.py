"""`tessera gui`: the window, optionally with a file, a results store, or as a one-shot screenshot."""

from __future__ import annotations

from . import options


def add_parsers(sub) -> None:
    p = sub.add_parser("gui", help="open the window (the default with no command)")
    p.add_argument("file", nargs="?", metavar="FILE", help="an operator or a sequence to open")
    options.store(
        p, "results store (SQLite) for the explorer views " + options.STORE_HELP.removeprefix("results store file ")
    )
    p.add_argument(
        "--view",
        choices=("editor", "sequences", "search", "explorer", "gallery"),
        help="the page to start on (default: the start page, or the file's editor)",
    )
    p.add_argument(
        "--screenshot",
        metavar="OUT.png",
        help="open, wait until idle, save a PNG of the whole window and exit (works offscreen)",
    )
    p.set_defaults(func=cmd_gui)


def cmd_gui(args) -> int:
    from app.gui.main import run  # Qt is imported only when the window is wanted

    return run(args.file, args.store, args.screenshot, args.view)
