"""Reading a damaged store: the results rows that can still be read, found by ranges of ids
around the damaged pages, and a copy of them in memory on which the queries written for the
results view (the explorer's points, its table's order and filter) run unchanged."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import sqlite_utils

from .errors import StoreDamaged

#: results read at once from a damaged store; a range that meets a damaged page is read row by row
SALVAGE_RANGE = 256


def readable_results(db: sqlite_utils.Database, where: str | None = None, where_args: Sequence = ()) -> Iterator[dict]:
    """The results rows of a damaged store that can still be read: measured ones by
    measurement id, unmeasured operators by operator id, SALVAGE_RANGE ids at a time,
    and row by row in a range that meets a damaged page (its rows there are lost)."""
    wanted = f"({where}) AND " if where else ""
    for key, table in (("measurement_id", "measurements"), ("operator_id", "operators")):
        unmeasured = "" if key == "measurement_id" else " AND measurement_id IS NULL"
        last = db.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0
        for start in range(1, last + 1, SALVAGE_RANGE):
            ids = range(start, min(start + SALVAGE_RANGE, last + 1))
            try:
                yield from list(
                    db["results"].rows_where(
                        f"{wanted}{key} BETWEEN ? AND ?{unmeasured}", [*where_args, start, ids[-1]]
                    )
                )
            except StoreDamaged:
                for i in ids:
                    with contextlib.suppress(StoreDamaged):
                        yield from list(db["results"].rows_where(f"{wanted}{key} = ?{unmeasured}", [*where_args, i]))


def readable_copy(db: sqlite_utils.Database) -> sqlite_utils.Database:
    """The readable results rows of a damaged store in a database in memory, as a table
    `results` with the view's columns (untyped, so every value stays as it was read)."""
    columns = [d[0] for d in db.execute("SELECT * FROM results LIMIT 0").description]
    copy = sqlite_utils.Database(memory=True)
    names = ", ".join(f'"{c}"' for c in columns)
    copy.execute(f"CREATE TABLE results ({names})")
    copy.conn.executemany(
        f"INSERT INTO results ({names}) VALUES ({', '.join('?' * len(columns))})",
        ([row[c] for c in columns] for row in readable_results(db)),
    )
    copy.execute("CREATE INDEX results_measurement ON results (measurement_id)")
    copy.execute("CREATE INDEX results_operator ON results (operator_id)")
    return copy
