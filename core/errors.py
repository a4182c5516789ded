"""The base of every error a user may see. Each carries a message meant for a person, naming
the node, dimension, file or element at fault, so callers print it as-is, and shows a bad
value cut short (shown, shorten) rather than echoing all of it."""

import reprlib


class TesseraError(Exception):
    """Base of every error a user may see; the CLI prints its message without a traceback."""


#: characters of a rejected value that a message shows: enough to find it, never the whole of a
#: value that may be megabytes long
SHOWN = 60
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = SHOWN
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict = 2, 4, 4


def shorten(text: str, limit: int = SHOWN) -> str:
    """`text` itself when short, else its first `limit` characters, '...' and its length."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def shown(value: object) -> str:
    """A rejected value as a message shows it: its repr (reprlib's, which never builds the whole
    of a long or deeply nested value), cut to SHOWN characters."""
    try:
        text = _SHORT.repr(value)
    except ValueError:  # a whole number beyond Python's digit limit
        return "a whole number of thousands of digits"
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."
