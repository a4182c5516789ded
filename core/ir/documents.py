"""Which kind of Tessera document a file holds, read from its format tag, so one Open
command can hand each file to the editor that reads it."""

from __future__ import annotations

from pathlib import Path

from .errors import FormatError, shown
from .sequence import FORMAT as SEQUENCE
from .serialize import FORMAT as OPERATOR
from .serialize import load_json

KINDS = {OPERATOR: "operator", SEQUENCE: "sequence"}


def document_kind(path: str | Path) -> str:
    """'operator' or 'sequence'; FormatError naming the file when it is neither."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise FormatError(f"{path}: cannot read ({e})") from None
    doc = load_json(text, str(path))
    tag = doc.get("format") if isinstance(doc, dict) else None
    if not isinstance(tag, str) or tag not in KINDS:  # any JSON value may stand there
        raise FormatError(f"{path}: format: expected one of {', '.join(map(repr, KINDS))}, got {shown(tag)}")
    return KINDS[tag]
