"""Reading the results view in the ways the explorer and the CLI need at 10^5 rows:
in chunks that leave the GIL to other threads, by id in parts the view's indexes can
serve, and in a sorted order of ids with their sort keys (see table_order)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import StoreDamaged
from .result_fields import FIELDS, NUMERIC
from .result_filter import ResultFilter
from .stored_values import numbers_only
from .table_order import TableOrder

#: the result id of a results-view row, as SQL: the measurement id, or minus the operator
#: id for an operator not measured yet
RESULT_ID = "COALESCE(measurement_id, -operator_id)"
FETCH_ROWS = 2000  # rows per fetch ...
FETCH_PAUSE_S = 5e-4  # ... and a pause after each, so a GUI thread gets the GIL between them
IDS_PER_QUERY = 500


def fetch(db, sql: str, args=()) -> Iterator[list[tuple]]:
    """Rows in chunks. Building Python rows holds the GIL, and every Qt call in a GUI
    thread releases and retakes it; without the pauses a long read would make each of
    those calls wait up to the interpreter's switch interval (5 ms)."""
    cursor = db.execute(sql, list(args))
    while rows := cursor.fetchmany(FETCH_ROWS):
        yield rows
        time.sleep(FETCH_PAUSE_S)


def by_ids(ids) -> Iterator[tuple[str, list]]:
    """WHERE clauses (and arguments) that pick results by id from the results view, in
    parts. A list of parameters reaches the view's indexes; json_each(?) would not."""
    ids = [int(i) for i in ids]
    for clause, wanted in (
        ("measurement_id IN ({})", [i for i in ids if i > 0]),
        ("measurement_id IS NULL AND operator_id IN ({})", [-i for i in ids if i < 0]),
    ):
        for start in range(0, len(wanted), IDS_PER_QUERY):
            part = wanted[start : start + IDS_PER_QUERY]
            yield clause.format(", ".join("?" * len(part))), part


def result_rows(db, ids) -> dict[int, dict]:
    """Full results rows by result id, each with its `result_id`; from a damaged store, the
    ones that can still be read."""
    try:
        return _result_rows(db, ids)
    except StoreDamaged:  # a damaged page among them: each one that can be read
        found: dict[int, dict] = {}
        for result_id in ids:
            with contextlib.suppress(StoreDamaged):
                found.update(_result_rows(db, [result_id]))
        return found


def _result_rows(db, ids) -> dict[int, dict]:
    found: dict[int, dict] = {}
    for clause, args in by_ids(ids):
        cursor = db.execute(f"SELECT {RESULT_ID} AS result_id, * FROM results WHERE {clause}", args)
        names = [d[0] for d in cursor.description]
        found.update((row[0], numbers_only(dict(zip(names, row)), NUMERIC)) for row in cursor.fetchall())
    return found


def only_ids(result_filter: ResultFilter, ids) -> ResultFilter:
    """The filter, narrowed to the results `ids` (the window's "only selected")."""
    return result_filter.and_(f"{RESULT_ID} IN (SELECT value FROM json_each(?))", "[" + ",".join(map(str, ids)) + "]")


@dataclass(frozen=True)
class OrderQuery:
    """The results matching a filter, sorted by one column; with `ids`, only the sort keys
    of those results (new arrivals, to be put in place by TableOrder.inserted)."""

    where: ResultFilter
    order_by: str
    descending: bool
    ids: tuple[int, ...] | None = None

    def read(self, db) -> TableOrder | tuple[list[int], list]:
        numeric = FIELDS[self.order_by].numeric
        where, args = self.where.where, self.where.args
        if self.ids is not None:
            filtered = f" AND ({where})" if where else ""
            found = [
                row
                for clause, ids in by_ids(self.ids)
                for rows in fetch(
                    db, f"SELECT {RESULT_ID}, {self.order_by} FROM results WHERE {clause}{filtered}", [*ids, *args]
                )
                for row in rows
            ]
            return [r[0] for r in found], [r[1] for r in found]
        direction = "DESC" if self.descending else "ASC"
        sql = (
            f"SELECT {RESULT_ID}, {self.order_by} FROM results{' WHERE ' + where if where else ''} "
            f"ORDER BY {self.order_by} IS NULL, {self.order_by} {direction}, 1 {direction}"
        )
        ids, keys = [], []
        for rows in fetch(db, sql, args):
            ids += [r[0] for r in rows]
            keys += [r[1] for r in rows]
        return TableOrder(ids, keys, numeric, self.descending)
