"""Where an export goes and how it is written: a folder gets a sanitised file name, an
existing file is never replaced unless the caller allows it, and every file is written
to a temporary name first and renamed, so a failed export never leaves half a file."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from ..atomic import replace_atomically
from .errors import ExportError
from .formats import FORMATS
from .names import file_stem

_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+")
LIBRARY_SUFFIXES = (".so", ".dylib", ".dll", ".tar")  # the files tvm.runtime.load_module reads


def output_paths(fmt: str, out: str | Path, name: str) -> list[Path]:
    """The files an export writes, main file first. `out` is a file path, or a folder (an
    existing one, or a path ending in '/') that gets '<sanitised name><suffix>'.
    A library comes with its loader script '<stem>_loader.py' beside it, and gets the suffix
    .so when its name has none TVM's loader knows (the CLI's 'wrote' line shows the name)."""
    spec = FORMATS[fmt]
    text = str(out)
    out = Path(out).expanduser()
    if out.is_dir() or text.endswith(("/", os.sep)):
        out = out / f"{file_stem(name)}{spec.suffix}"
    if fmt != "library":
        return [out]
    if out.suffix not in LIBRARY_SUFFIXES:  # TVM's loader reads the format from the suffix
        out = out.with_name(f"{out.name}{spec.suffix}")
    check_library_name(out)
    return [out, out.with_name(f"{out.stem}_loader.py")]


def check_library_name(path: Path) -> None:
    """The loader script names the library in its source: only plain names may go there."""
    if not _PLAIN_NAME.fullmatch(path.name):
        raise ExportError(
            f"library file name {path.name!r}: use only letters, digits, '.', '_' and '-' "
            "(its loader script refers to it by name)"
        )


def refuse_overwrite(paths: list[Path], force: bool) -> None:
    """ExportError naming the files that exist, unless `force`; a folder in the way is an error."""
    for path in paths:
        if path.is_dir():
            raise ExportError(f"{path} is a folder; give a file name or a folder to write into")
    existing = [str(p) for p in paths if p.exists()]
    if existing and not force:
        raise ExportError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; pass --force to overwrite"
        )


def write_with(path: Path, write: Callable[[Path], object]) -> Path:
    """Call write(temporary path) and rename the result to `path` (core.atomic); ExportError
    naming the file if that fails."""
    try:
        return replace_atomically(path, write)
    except OSError as e:
        raise ExportError(f"cannot write {path}: {e.strerror or e}") from None


def write_text(path: Path, text: str) -> Path:
    return write_with(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
