"""Safe names made from operator names, which come from files and searches: a file stem
that is also a Python module name, a class name, and text fit for a generated docstring.

Nothing a user typed reaches a file name or generated source unfiltered: names keep only
ASCII letters, digits and underscores, and docstring text only printable ASCII without
quotes or backslashes, so it can neither end the docstring nor form an escape."""

from __future__ import annotations

import keyword
import re
import unicodedata

FALLBACK = "operator"
MAX_STEM = 60
# device names Windows will not create as files, whatever the extension
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def _ascii(text: str) -> str:
    """Accented letters lose their accents (é -> e); other non-ASCII characters go."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def file_stem(name: str) -> str:
    """'Gated separable (v2)' -> 'gated_separable_v2': lower case, [a-z0-9_], at most 60
    characters, never empty, never starting with a digit, never a reserved device name;
    usable as a file name on every system and as a Python module name."""
    stem = re.sub(r"[^a-z0-9]+", "_", _ascii(name).lower()).strip("_")[:MAX_STEM].rstrip("_")
    if not stem:
        return FALLBACK
    if stem[0].isdigit():
        stem = f"op_{stem}"
    if stem in _RESERVED or keyword.iskeyword(stem):
        stem = f"{stem}_op"
    return stem


def class_name(name: str) -> str:
    """'gated separable v2' -> 'GatedSeparableV2', a Python class name that is not a keyword."""
    words = file_stem(name).split("_")
    camel = "".join(w[:1].upper() + w[1:] for w in words if w)
    return f"Op{camel}" if camel[0].isdigit() or keyword.iskeyword(camel) else camel


def docstring_text(text: str, limit: int = 200) -> str:
    """One line of printable ASCII without quotes or backslashes, at most `limit` characters."""
    clean = re.sub(r"[^ -~]|[\"'\\]", "?", _ascii(" ".join(str(text).split())))
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."
