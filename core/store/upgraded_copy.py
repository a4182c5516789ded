"""Reading a store of an older schema without writing to it: its rows copied into memory and
brought up to date there, so every query written for the current schema (results, jobs, the
explorer's) runs on it unchanged. The file itself is migrated only by a command that writes."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from .schema import SCHEMA_VERSION, migrate, schema_version


def upgraded_copy(db: sqlite_utils.Database, path: Path) -> sqlite_utils.Database:
    """The whole of the (undamaged) store `db`, copied page by page into memory and migrated there."""
    copy = sqlite_utils.Database(memory=True)
    db.conn.backup(copy.conn)
    bring_up_to_date(copy, path)
    return copy


def bring_up_to_date(copy: sqlite_utils.Database, path: Path) -> None:
    """Migrate a copy in memory (its user_version says from where) to the current schema."""
    if schema_version(copy) < SCHEMA_VERSION:
        with copy.conn:
            migrate(copy, path)
