"""Reading a damaged store: every table's rows that can still be read, copied table by table
into a database in memory (by ranges of row ids, and row by row in a range that meets a
damaged page), with the store's indexes and its results view, so the queries written for
the results (the CLI's, the explorer's points, its table's order and filter) run unchanged.
What could not be read is said, table by table."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import sqlite_utils

from core.errors import shorten

from .errors import StoreDamaged
from .schema import schema_version
from .upgraded_copy import bring_up_to_date

#: rows read at once from a damaged store; a range that meets a damaged page is read row by row
SALVAGE_RANGE = 256


@dataclasses.dataclass(frozen=True)
class Salvage:
    """The readable rows of a damaged store (`db`, in memory) and, for each table that lost
    rows, which ones."""

    db: sqlite_utils.Database
    lost: dict[str, str]

    def note(self) -> str:
        """What was lost, for a person: 'lost: operators (every row), measurements (ids 257-512)'."""
        if not self.lost:
            return "every row of every table could be read"
        return "lost: " + "; ".join(f"{table} ({rows})" for table, rows in self.lost.items())


def salvage(db: sqlite_utils.Database, path: Path) -> Salvage:
    """Copy what can be read of the damaged store `db` into memory, table by table, and bring
    the copy up to date when the store is of an older schema (the file is never migrated). The
    results view there keeps measurements whose operator row was lost (its columns empty)."""
    copy = sqlite_utils.Database(memory=True)
    schema = db.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    lost = {}
    for kind, name, sql in schema:
        if kind == "table":
            copy.execute(sql)
            missing = _copy_rows(db, copy, name)
            if missing:
                lost[name] = missing
    for kind, _, sql in schema:
        if kind in ("index", "view"):
            copy.execute(sql)
    copy.execute(f"PRAGMA user_version = {int(schema_version(db))}")
    bring_up_to_date(copy, path)
    view = copy.execute("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'results'").fetchone()
    if view is not None:  # an operator lost to a damaged page must not hide its measurements
        copy.execute("DROP VIEW results")
        copy.execute(view[0].replace("\nJOIN operators AS o", "\nLEFT JOIN operators AS o"))
    return Salvage(copy, lost)


def _copy_rows(db: sqlite_utils.Database, copy: sqlite_utils.Database, table: str) -> str | None:
    """Copy the readable rows of `table`; which rows were lost, or None."""
    try:
        last = db.execute(f'SELECT max(rowid) FROM "{table}"').fetchone()[0] or 0
    except StoreDamaged:
        return "every row: its first page is damaged"
    width = len(db[table].columns)
    insert = f'INSERT INTO "{table}" VALUES ({", ".join("?" * width)})'
    read = f'SELECT * FROM "{table}" WHERE rowid BETWEEN ? AND ?'
    lost: list[int] = []
    for start in range(1, last + 1, SALVAGE_RANGE):
        end = min(start + SALVAGE_RANGE - 1, last)
        try:
            rows = db.execute(read, [start, end]).fetchall()
        except StoreDamaged:
            rows = []
            for i in range(start, end + 1):
                try:
                    rows += db.execute(read, [i, i]).fetchall()
                except StoreDamaged:
                    lost.append(i)
        copy.conn.executemany(insert, rows)
    return shorten(f"ids {_spans(lost)}", 200) if lost else None


def _spans(ids: list[int]) -> str:
    """[3, 4, 5, 9] -> '3-5, 9'."""
    spans: list[list[int]] = []
    for i in ids:
        if spans and spans[-1][1] == i - 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
