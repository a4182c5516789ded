"""Errors of the results store, each with a message meant for a person: which file, what is
wrong with it and what to do."""

from __future__ import annotations

from pathlib import Path

from core.errors import TesseraError


class StoreError(TesseraError):
    """The store file cannot be opened, is too new for this program, or stayed locked."""


class StoreDamaged(StoreError):
    """SQLite's integrity check failed on the file, or a read met a damaged page: nothing
    more is written to it (what can still be read can be exported)."""


class StoreMissing(StoreError):
    """No file at the store's path: a command that only reads finds nothing there, and creates nothing."""


class StoreReadOnly(StoreError):
    """The file or its folder cannot be written: the store is read, never written."""


class StoreFull(StoreError):
    """The disk holding the store is full: nothing can be written (nor, once SQLite must make
    its -shm file, read) until space is freed. Nothing already written is lost."""


class InvalidResult(TesseraError):
    """A result dict (from a job handler or a caller) lacks a field or has one of the wrong type."""


def damaged(path: Path, detail: str) -> StoreDamaged:
    """The one message for a damaged store, saying how to keep what can still be read."""
    return StoreDamaged(
        f"the results store {path} is damaged ({detail}); Tessera no longer writes to it. Save the "
        f"results that can still be read with `tessera export --format csv --store {path} --out results.csv` "
        f"(or list them with `tessera results --store {path}`), then move the file aside: the next "
        "command creates a new store in its place"
    )


def read_only(path: Path, why: str) -> StoreReadOnly:
    return StoreReadOnly(
        f"the results store {path} is read-only ({why}): it can be read but not changed; "
        "make it writable, or copy it to a writable folder and use --store"
    )


def disk_full(path: Path, detail: str) -> StoreFull:
    return StoreFull(f"the disk holding the results store {path} is full ({detail}): free some space")
