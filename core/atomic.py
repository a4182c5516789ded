"""Whole-file writes: a reader, another process or a crash never sees half a file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def replace_atomically(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call write(temporary path) beside `path` (parents created), then rename it to `path`.
    The temporary file is hidden, unique to this process and keeps the suffix, for writers
    that pick a format by it; it never outlives the call."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        write(tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text_atomically(path: str | Path, text: str) -> Path:
    return replace_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
