"""Open the store file the way every process must, and write to it without "database is locked".

Readers never wait in WAL mode. Writers take the write lock up front with
BEGIN IMMEDIATE (a deferred transaction that reads first and writes later can
fail at once instead of waiting), wait for it through SQLite's busy timeout,
and retry for a while longer if that runs out; transactions stay short.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils

from .errors import StoreError


def open_database(path: Path, busy_timeout: float) -> sqlite_utils.Database:
    """A connection in WAL mode with a busy timeout (seconds) and foreign keys on."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=busy_timeout)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open the results store {path}: {exc}") from None
    try:
        db = sqlite_utils.Database(conn, execute_plugins=False)
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("PRAGMA synchronous = NORMAL")  # in WAL mode: safe against crashes, not against power loss
        if db.journal_mode != "wal":
            db.enable_wal()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"cannot open the results store {path}: {exc}") from None
    return db


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


@contextlib.contextmanager
def write_transaction(db: sqlite_utils.Database, path: Path, patience: float) -> Iterator[None]:
    """One BEGIN IMMEDIATE ... COMMIT (rolled back on error). Inside an open one, joins it."""
    conn = db.conn
    if conn.in_transaction:
        yield
        return
    deadline = time.monotonic() + patience
    pause = 0.01
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as exc:
            if not _locked(exc):
                raise StoreError(f"cannot write to the results store {path}: {exc}") from None
            if time.monotonic() > deadline:
                raise StoreError(
                    f"the results store {path} stayed locked by another process for {patience:g} s: {exc}"
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
