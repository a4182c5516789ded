"""Real store files to break: a store of many measurements, each findable by a marker text,
and the damage SQLite's own checks find (a page header overwritten: the page of a marker, or
the first page of a table)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.ir.serialize import read_document
from core.store import Store

ROWS = 1000


def build_store(path: Path, examples_dir: Path, rows: int = ROWS) -> None:
    """A store of `rows` made-up measurements, each with a marker text (as its layout) to find
    its page by; all in the main file (checkpointed), as after the last connection closed."""
    with Store(path) as store:
        op = store.add_operator(read_document(examples_dir / "conv2d.json"), "conv2d")
        with store.write():
            for i in range(rows):
                store.add_measurement(
                    op, None, {"latency_ms": 1.0 + i, "flops": 1e6 * (1 + i % 7), "layout": f"marker-{i:05d}"}
                )
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def damage_page(path: Path, marker: bytes) -> int:
    """Overwrite the header of the page holding `marker` with 0xff bytes; returns the page number."""
    size = _page_size(path)
    page = path.read_bytes().index(marker) // size + 1
    _overwrite_header(path, page, size)
    return page


def damage_table(path: Path, table: str) -> int:
    """Overwrite the header of `table`'s first (root) page, which every read of it passes through."""
    conn = sqlite3.connect(path)
    page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", [table]).fetchone()[0]
    conn.close()
    _overwrite_header(path, page, _page_size(path))
    return page


def _page_size(path: Path) -> int:
    """The page size, all pages in the main file (checkpointed)."""
    conn = sqlite3.connect(path)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return size


def _overwrite_header(path: Path, page: int, size: int) -> None:
    with open(path, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(b"\xff" * 16)
