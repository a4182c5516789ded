"""What a path given as the results store is, found before SQLite opens it, and whether an
opened SQLite file is a Tessera store: a folder, a FIFO, a file of another format, a store of
a newer Tessera or another program's database is refused by name, and nothing is written to it
(SQLite would switch it to WAL mode and add our tables beside the user's)."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from core.errors import shorten

from .errors import StoreError
from .schema import refuse_newer, schema_version

SQLITE_MAGIC = b"SQLite format 3\x00"
#: tables every Tessera store has had since its first schema version
CORE_TABLES = {"operators", "devices", "jobs", "measurements"}


@dataclass(frozen=True)
class Header:
    """What the first 100 bytes of a SQLite file say (the main file's copy of page 1)."""

    wal: bool  # in WAL mode (else a rollback journal)
    user_version: int  # a Tessera store's schema version


def kind_of(path: Path) -> str | None:
    """What `path` is when it is not a regular file ('a folder', 'a FIFO (named pipe)', ...);
    None for a regular file or nothing at all."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"a path that cannot be read ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def refuse_unusual(path: Path) -> None:
    """StoreError if `path` exists and is not a regular file."""
    kind = kind_of(path)
    if kind is not None:
        raise StoreError(f"the results store {path} is {kind}, not a file: give the path of a results store file")


def read_header(path: Path) -> Header:
    """The header of the SQLite file at `path` (a regular file of at least 1 byte); StoreError
    if it is not a SQLite database or comes from a newer Tessera."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError as exc:
        raise StoreError(f"cannot read the results store {path}: {exc.strerror}") from None
    if not head.startswith(SQLITE_MAGIC):
        raise StoreError(
            f"the results store {path} is not a SQLite database (it starts with {shorten(repr(head[:16]), 40)}): "
            "not a Tessera results store; choose another --store"
        )
    if len(head) < 100:
        raise StoreError(f"the results store {path} is cut short ({len(head)} bytes): not a complete SQLite database")
    header = Header(wal=head[18] == 2, user_version=int.from_bytes(head[60:64], "big", signed=True))
    refuse_newer(header.user_version, path)
    return header


def refuse_foreign(db: sqlite_utils.Database, path: Path) -> None:
    """StoreError unless the open file is a Tessera store (any schema version) or a database
    with no tables yet (a store being created); also refuses a newer schema version (the
    header read before opening may predate a -wal file)."""
    version = schema_version(db)
    refuse_newer(version, path)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tables = {t for t in tables if not t.startswith("sqlite_")}
    if not tables and version == 0:
        return
    if version < 1 or not tables >= CORE_TABLES:
        listed = shorten(", ".join(sorted(tables)) or "none")
        raise StoreError(
            f"the results store {path} is a SQLite database of another program (its tables: {listed}), "
            "not a Tessera results store; Tessera leaves it as it is: choose another --store"
        )
