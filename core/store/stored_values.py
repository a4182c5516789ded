"""Values read back from the store that may have been changed outside Tessera (by hand in an
SQLite browser, or by another program). JSON that no longer parses becomes a StoreError naming
the table, the row and the column, so the command or the window says what to mend; text in a
numeric column (SQLite keeps it) reads as missing, as NULL does, so no view or report fails
formatting it as a number."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from .errors import StoreError


def stored_json(value: Any, table: str, row_id: Any, column: str) -> Any:
    """`value` (the column's text) decoded; StoreError when it is not JSON."""
    try:
        return json.loads(value)
    except (TypeError, ValueError) as exc:
        raise edited(table, row_id, column, f"no valid JSON ({exc})") from None


def edited(table: str, row_id: Any, column: str, holds: str) -> StoreError:
    """The one message for a value only an edit outside Tessera leaves: where, and what it holds."""
    return StoreError(
        f"the results store's {table} row {row_id} holds {holds} in its {column} column: "
        "it was changed outside Tessera; restore that value or delete the row"
    )


def numbers_only(row: dict, numeric: Collection[str]) -> dict:
    """The row with each value of a `numeric` column that is not a number read as missing."""
    bad = [k for k in numeric if row.get(k) is not None and not isinstance(row[k], (int, float))]
    return {**row, **dict.fromkeys(bad)} if bad else row
