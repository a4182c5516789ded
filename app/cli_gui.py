"""`tessera gui`: the window, optionally with a file, a results store, or as a one-shot screenshot."""

from __future__ import annotations


def add_parsers(sub) -> None:
    p = sub.add_parser("gui", help="open the window (the default with no command)")
    p.add_argument("file", nargs="?", metavar="FILE", help="an operator or a sequence to open")
    p.add_argument(
        "--store",
        metavar="PATH",
        help="results store (SQLite) for the explorer views "
        "(default: $TESSERA_STORE or ~/.local/share/tessera/results.db)",
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
    from app.gui import run  # Qt is imported only when the window is wanted

    return run(args.file, args.store, args.screenshot, args.view)
