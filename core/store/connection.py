"""Open the store file the way every process must, say plainly what is wrong with the file
when SQLite fails on it, and write to it without "database is locked".

Readers never wait in WAL mode. Writers take the write lock up front with
BEGIN IMMEDIATE (a deferred transaction that reads first and writes later can
fail at once instead of waiting), wait for it through SQLite's busy timeout,
and retry for a while longer if that runs out; transactions stay short.

Every statement runs on a StoreConnection, which turns SQLite's complaints about the file
(damaged, read-only, full, unreadable) into StoreErrors naming it; errors in the SQL itself
stay sqlite3's own (sqlite-utils catches some of them). A file or folder nobody may write is
opened read-only, so a store can be read wherever it can be reached; a read-only connection
changes none of the store's files, nor creates any (connect_for_reading).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sqlite3
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import sqlite_utils

from .errors import StoreError, StoreMissing, damaged, disk_full, read_only
from .file_check import read_header, refuse_foreign, refuse_unusual

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

    #: a temporary folder holding the copy this connection reads (connect_for_reading), or None
    copy_folder: Path | None = None

    def close(self) -> None:
        super().close()
        if self.copy_folder is not None:
            shutil.rmtree(self.copy_folder, ignore_errors=True)
            self.copy_folder = None

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


def open_database(
    path: Path, busy_timeout: float, patience: float, refusal: str | None = None
) -> sqlite_utils.Database:
    """A connection with a busy timeout (seconds) and foreign keys on, to a Tessera store (or a
    new one). Writable, in WAL mode, unless `refusal` or why_read_only says why it may not be
    written: then read-only, changing none of the store's files (connect_for_reading), and a
    missing file is StoreMissing. Another program holding the file locked (in SQLite's
    exclusive locking mode) is waited for up to `patience` s. A folder, a FIFO, a file that is
    not a SQLite database, another program's database and a store of a newer Tessera are
    refused by name before anything is written to them."""
    refuse_unusual(path)
    why = why_read_only(path)
    if not path.exists() and refusal is not None:
        raise StoreMissing(f"no results store at {path}: there is nothing to read yet")
    if not path.exists() and why is not None:
        raise StoreError(f"cannot create the results store {path}: {why}; choose another --store")
    refusal = refusal or why
    if _empty_file(path):
        raise StoreError(
            f"the results store {path} is an empty file (0 bytes), not a store: a copy that failed? "
            "Delete it to start a new store there, or choose another --store"
        )
    header = read_header(path) if path.exists() else None
    try:
        if refusal is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), timeout=busy_timeout, factory=StoreConnection)
        else:
            conn = connect_for_reading(path, busy_timeout, header is not None and header.wal)
    except (OSError, sqlite3.Error) as exc:
        if nearly_full(path):
            raise disk_full(path, str(exc)) from None
        raise StoreError(f"cannot open the results store {path}: {exc}") from None
    conn.path, conn.refusal = path, refusal
    db = sqlite_utils.Database(conn, execute_plugins=False)
    try:
        patiently(lambda: _set_up(db, path, refusal is None), path, patience)
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


def _set_up(db: sqlite_utils.Database, path: Path, writable: bool) -> None:
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = NORMAL")  # in WAL mode: safe against crashes, not against power loss
    refuse_foreign(db, path)  # before WAL mode is switched on: another program's file stays as it was
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


def connect_for_reading(path: Path, busy_timeout: float, wal_mode: bool) -> StoreConnection:
    """A read-only connection that changes none of the store's files (main, -wal, -shm) and
    creates none. With a -shm file (a store in use, or its writer died): read live, SQLite's
    shared index left as it is (readonly_shm). Without a -wal file, or with an empty one, in
    WAL mode (no process has it open): the main file as it is (immutable; mode=ro would create
    -wal and -shm files). A -wal without its -shm: a copy of both in a folder of our own (the
    connection deletes it when closed); where no copy can be made, the main file alone, and
    the connection says so (`stale`). A rollback-journal file: plainly read-only."""
    uri = "file:" + urllib.parse.quote(str(path.resolve()))
    wal, shm = path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")
    wal_size = wal.stat().st_size if wal.is_file() else 0
    if wal.is_file() and shm.is_file():
        return _connect(uri + "?mode=ro&readonly_shm=1", busy_timeout)
    if not wal_size:
        return _connect(uri + ("?immutable=1" if wal_mode else "?mode=ro"), busy_timeout)
    try:
        return _connect_copy(path, wal, busy_timeout)
    except OSError:
        conn = _connect(uri + "?immutable=1", busy_timeout)
    conn.stale = (
        f"its -wal file ({wal_size:,} bytes) may hold changes not yet in the main file, which SQLite "
        "cannot read without a -shm file, and no copy of both could be made to read them; to read them all, "
        "copy the store with its -wal file to a writable folder"
    )
    return conn


def _connect(uri: str, busy_timeout: float) -> StoreConnection:
    return sqlite3.connect(uri, timeout=busy_timeout, uri=True, factory=StoreConnection)


def _connect_copy(path: Path, wal: Path, busy_timeout: float) -> StoreConnection:
    """A connection to a copy of the store and its -wal file, in a temporary folder removed
    when the connection closes."""
    folder = Path(tempfile.mkdtemp(prefix="tessera-read-"))
    try:
        copy = folder / path.name
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, folder / wal.name)
        conn = sqlite3.connect(str(copy), timeout=busy_timeout, factory=StoreConnection)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    conn.copy_folder = folder
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
