"""Real store files to break: a store of many measurements, each findable by a marker text,
and the damage SQLite's own checks find (a page header overwritten)."""

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
    conn = sqlite3.connect(path)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    at = path.read_bytes().index(marker)
    with open(path, "r+b") as f:
        f.seek(at - at % size)
        f.write(b"\xff" * 16)
    return at // size + 1
