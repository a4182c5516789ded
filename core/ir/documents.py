"""Which kind of Tessera document a file holds, read from its format tag, so one Open
command can hand each file to the editor that reads it."""

from __future__ import annotations

from pathlib import Path

from core.errors import shown

from .errors import FormatError
from .sequence import FORMAT as SEQUENCE
from .serialize import FORMAT as OPERATOR
from .serialize import read_json

KINDS = {OPERATOR: "operator", SEQUENCE: "sequence"}


def document_kind(path: str | Path) -> str:
    """'operator' or 'sequence'; FormatError naming the file when it is neither."""
    doc = read_json(path)
    tag = doc.get("format") if isinstance(doc, dict) else None
    if not isinstance(tag, str) or tag not in KINDS:  # any JSON value may stand there
        raise FormatError(f"{path}: format: expected one of {', '.join(map(repr, KINDS))}, got {shown(tag)}")
    return KINDS[tag]
