"""`tessera gui`: the window, optionally with a file, a results store, or as a one-shot screenshot."""

from __future__ import annotations

import argparse

from app.page_table import PAGE_KEYS

from . import options


def add_parsers(sub) -> None:
    p = sub.add_parser("gui", help="open the window (the default with no command)")
    p.add_argument("file", nargs="?", metavar="FILE", help="an operator or a sequence to open")
    options.store(
        p, "results store (SQLite) for the explorer views " + options.STORE_HELP.removeprefix("results store file ")
    )
    p.add_argument(
        "--view",
        choices=PAGE_KEYS,
        help="the page to start on (default: the start page, or the file's editor)",
    )
    p.add_argument(
        "--screenshot",
        metavar="OUT.png",
        help="open, wait until idle, save a PNG of the whole window and exit (works offscreen)",
    )
    p.add_argument(
        "--size",
        metavar="WxH",
        default="1600x1000",
        type=window_size,
        help="the window's size in a screenshot (default: 1600x1000; the README's are 1280x720)",
    )
    p.set_defaults(func=cmd_gui)


def window_size(text: str) -> tuple[int, int]:
    """'1280x720' -> (1280, 720)."""
    width, _, height = text.lower().partition("x")
    if not (width.isdigit() and height.isdigit() and int(width) >= 320 and int(height) >= 240):
        raise argparse.ArgumentTypeError(f"expected a size such as 1280x720 (at least 320x240), got {text!r}")
    return int(width), int(height)


def cmd_gui(args) -> int:
    from app.gui.main import run  # Qt is imported only when the window is wanted

    return run(args.file, args.store, args.screenshot, args.view, args.size)
