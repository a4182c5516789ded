"""Open the store file the way every process must, say plainly what is wrong with the file
when SQLite fails on it, and write to it without "database is locked".

Readers never wait in WAL mode. Writers take the write lock up front with
BEGIN IMMEDIATE (a deferred transaction that reads first and writes later can
fail at once instead of waiting), wait for it through SQLite's busy timeout,
and retry for a while longer if that runs out; transactions stay short.

Every statement runs on a StoreConnection, which turns SQLite's complaints about the file
(damaged, read-only, full, unreadable) into StoreErrors naming it; errors in the SQL itself
stay sqlite3's own (sqlite-utils catches some of them). A file or folder nobody may write is
opened read-only, so a store can be read wherever it can be reached.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import sqlite_utils

from .errors import StoreError, damaged, disk_full, read_only

T = TypeVar("T")
_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_READ_ONLY = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM}
#: free bytes below which a disk that fails to read or write a store is taken for full (SQLite
#: then says "disk I/O error": it cannot size its -shm file, or a temporary file)
NEARLY_FULL = 1 << 20
_UNUSABLE = {
    sqlite3.SQLITE_IOERR: "the disk failed to read or write it: check the disk",
    sqlite3.SQLITE_CANTOPEN: "SQLite cannot open it or its -wal/-shm files: check the folder",
    sqlite3.SQLITE_NOLFS: "the file system cannot hold a file this large",
}


def _translated(method):
    """Run a sqlite3 method; a complaint about the file raises a StoreError instead."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            conn = self if isinstance(self, StoreConnection) else self.connection
            error = conn.store_error(exc)
            if error is None:
                raise
            raise error from None

    return call


class StoreCursor(sqlite3.Cursor):
    execute = _translated(sqlite3.Cursor.execute)
    executemany = _translated(sqlite3.Cursor.executemany)
    executescript = _translated(sqlite3.Cursor.executescript)
    fetchone = _translated(sqlite3.Cursor.fetchone)
    fetchmany = _translated(sqlite3.Cursor.fetchmany)
    fetchall = _translated(sqlite3.Cursor.fetchall)
    __next__ = _translated(sqlite3.Cursor.__next__)


class StoreConnection(sqlite3.Connection):
    """A connection to the store at `path`. `refusal` says why it must not be written (a
    read-only file or folder), `damage` what SQLite found damaged in it; either keeps
    Store.write from starting a transaction. `stale` says why what it reads may miss the
    latest changes (a -wal file it cannot read)."""

    path: Path
    refusal: str | None = None
    damage: str | None = None
    stale: str | None = None

    def cursor(self, factory=None):
        return super().cursor(factory or StoreCursor)

    # sqlite3's own shortcuts make a plain Cursor: these make a StoreCursor
    def execute(self, sql, parameters=(), /):
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql, parameters, /):
        return self.cursor().executemany(sql, parameters)

    def executescript(self, script, /):
        return self.cursor().executescript(script)

    commit = _translated(sqlite3.Connection.commit)

    def store_error(self, exc: sqlite3.Error) -> StoreError | None:
        """The StoreError `exc` means for the file, or None for an error in the SQL itself."""
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        if code in _DAMAGED:
            self.damage = self.damage or str(exc)
            return damaged(self.path, str(exc))
        if code in _READ_ONLY:
            return read_only(self.path, self.refusal or str(exc))
        if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and nearly_full(self.path)):
            return disk_full(self.path, str(exc))
        if code in _UNUSABLE:
            return StoreError(f"cannot use the results store {self.path} ({exc}): {_UNUSABLE[code]}")
        return None


def open_database(path: Path, busy_timeout: float, patience: float) -> sqlite_utils.Database:
    """A connection in WAL mode with a busy timeout (seconds) and foreign keys on; read-only
    (conn.refusal says why) when the file or its folder may not be written. Another program
    holding the file locked (in SQLite's exclusive locking mode) is waited for up to `patience` s."""
    if _empty_file(path):
        raise StoreError(
            f"the results store {path} is an empty file (0 bytes), not a store: a copy that failed? "
            "Delete it to start a new store there, or choose another --store"
        )
    refusal = why_read_only(path)
    try:
        if refusal is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), timeout=busy_timeout, factory=StoreConnection)
        elif path.exists():
            conn = _connect_read_only(path, busy_timeout)
        else:
            raise StoreError(f"cannot create the results store {path}: {refusal}; choose another --store")
    except (OSError, sqlite3.Error) as exc:
        if nearly_full(path):
            raise disk_full(path, str(exc)) from None
        raise StoreError(f"cannot open the results store {path}: {exc}") from None
    conn.path, conn.refusal = path, refusal
    db = sqlite_utils.Database(conn, execute_plugins=False)
    try:
        patiently(lambda: _set_up(db, refusal is None), path, patience)
    except (StoreError, sqlite3.DatabaseError) as exc:
        conn.close()
        if isinstance(exc, StoreError) and not conn.damage:
            raise
        # not a database at all, or its first page is damaged: nothing to export from it
        raise StoreError(f"cannot open the results store {path}: {conn.damage or exc}") from None
    return db


def _empty_file(path: Path, wait: float = 1.0) -> bool:
    """Whether `path` is a file of 0 bytes that stays so for `wait` s: SQLite would take it for a
    new store, where it is more likely one truncated, or a copy that failed. (A store another
    process is creating this instant is 0 bytes only until it writes its first page.)"""
    deadline = time.monotonic() + wait
    while path.is_file() and path.stat().st_size == 0:
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)
    return False


def why_read_only(path: Path) -> str | None:
    """Why the store at `path` must be opened read-only, or None if it may be written."""
    if path.exists() and not _may_write(path):
        return "the file is read-only"
    folder = next((p for p in path.parents if p.exists()), None)
    if folder is not None and not _may_write(folder):
        return "its folder is read-only, so SQLite cannot create the -wal and -shm files beside it"
    return None


def _set_up(db: sqlite_utils.Database, writable: bool) -> None:
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = NORMAL")  # in WAL mode: safe against crashes, not against power loss
    if writable and db.journal_mode != "wal":
        db.enable_wal()


def nearly_full(path: Path) -> bool:
    """Whether the disk the store at `path` is on (or would be) has less than NEARLY_FULL free."""
    folder = next((p for p in path.parents if p.exists()), None)
    try:
        return folder is not None and shutil.disk_usage(folder).free < NEARLY_FULL
    except OSError:
        return False


def _may_write(path: Path) -> bool:
    """os.access, and the permission bits too: a file nobody may write is read-only for root
    as well, whom os.access lets write anything."""
    return os.access(path, os.W_OK) and bool(path.stat().st_mode & 0o222)


def _connect_read_only(path: Path, busy_timeout: float) -> StoreConnection:
    """mode=ro reads a WAL store whose -shm file exists or can be made; where neither (a
    read-only folder), immutable=1 reads the file as it is, without its -wal file: the
    connection then says so (`stale`) if there is one."""
    uri = "file:" + urllib.parse.quote(str(path.resolve()))
    try:
        conn = sqlite3.connect(uri + "?mode=ro", timeout=busy_timeout, uri=True, factory=StoreConnection)
        sqlite3.Connection.execute(conn, "SELECT count(*) FROM sqlite_master").fetchone()  # SQLite's own error
        return conn
    except sqlite3.OperationalError as exc:
        if (exc.sqlite_errorcode & 0xFF) != sqlite3.SQLITE_CANTOPEN:
            raise
    conn = sqlite3.connect(uri + "?immutable=1", timeout=busy_timeout, uri=True, factory=StoreConnection)
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        conn.stale = (
            f"its -wal file ({wal.stat().st_size:,} bytes) may hold changes not yet in the main file, which SQLite "
            "cannot read without a -shm file, and none can be made in this read-only folder; to read them all, "
            "copy the store with its -wal file to a writable folder"
        )
    return conn


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def patiently(attempt: Callable[[], T], path: Path, patience: float) -> T:
    """attempt(), tried again while another process holds the store locked past SQLite's busy
    timeout, for up to `patience` s; then a StoreError saying so."""
    deadline = time.monotonic() + patience
    pause = 0.01
    while True:
        try:
            return attempt()
        except sqlite3.OperationalError as exc:
            if not _locked(exc):
                raise
            if time.monotonic() > deadline:
                raise StoreError(
                    f"the results store {path} stayed locked by another process for {patience:g} s: {exc}"
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


@contextlib.contextmanager
def write_transaction(db: sqlite_utils.Database, path: Path, patience: float) -> Iterator[None]:
    """One BEGIN IMMEDIATE ... COMMIT (rolled back on error). Inside an open one, joins it."""
    conn = db.conn
    if conn.in_transaction:
        yield
        return
    try:
        patiently(lambda: conn.execute("BEGIN IMMEDIATE"), path, patience)
    except sqlite3.OperationalError as exc:
        raise StoreError(f"cannot write to the results store {path}: {exc}") from None
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
