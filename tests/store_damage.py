"""Real store files to break: a store of many measurements, each findable by a marker text,
and the damage SQLite's own checks find (a page header overwritten: the page of a marker, or
the first page of a table)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import sqlite_utils

from core.ir.serialize import read_document
from core.store import Store
from core.store.schema import MIGRATIONS
from tests.support import EXAMPLES

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


def build_old_store(path: Path, version: int, rows: int = ROWS) -> None:
    """A store as Tessera of schema `version` wrote it (its own migrations, up to that version):
    one operator and `rows` measurements, each with its own bindings ({"M": 10000 + i}, the
    marker to find its page by); checkpointed, in WAL mode."""
    db = sqlite_utils.Database(path)
    db.enable_wal()
    with db.conn:
        for step in MIGRATIONS[:version]:
            step(db)
        db.execute(f"PRAGMA user_version = {version}")
        db.execute(
            "INSERT INTO operators (id, hash, document, name, origin) VALUES (1, 'f00d', ?, 'old conv', 'hand-made')",
            [json.dumps(read_document(EXAMPLES / "conv2d.json"))],
        )
        db.conn.executemany(
            "INSERT INTO measurements (operator_id, bindings, latency_ms, created) VALUES (1, ?, ?, ?)",
            [(json.dumps({"M": 10000 + i}), 1.0 + i, float(i)) for i in range(rows)],
        )
        db.execute("INSERT INTO jobs (kind, payload, state, operator_id) VALUES ('measure', '{}', 'done', 1)")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def with_unmerged_wal(path: Path, sql: str, rows: list[tuple]) -> None:
    """Leave `rows` written by `sql` in the store's -wal file, with its -shm file, as a process
    that died while writing leaves them (the main file as it was)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    with conn:
        conn.executemany(sql, rows)
    kept = {suffix: path.with_name(path.name + suffix).read_bytes() for suffix in ("", "-wal", "-shm")}
    conn.close()  # merges the -wal file and deletes it: put back the files as they were before
    for suffix, data in kept.items():
        path.with_name(path.name + suffix).write_bytes(data)
