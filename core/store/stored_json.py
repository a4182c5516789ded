"""JSON kept in the store's text columns, read back. A value changed outside Tessera (by hand,
or by another program) becomes a StoreError that names the table, the row and the column, so
the command or the window says what to mend instead of failing with a traceback."""

from __future__ import annotations

import json
from typing import Any

from .errors import StoreError


def stored_json(value: Any, table: str, row_id: Any, column: str) -> Any:
    """`value` (the column's text) decoded; StoreError when it is not JSON."""
    try:
        return json.loads(value)
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"the results store's {table} row {row_id} holds no valid JSON in its {column} column ({exc}): "
            "it was changed outside Tessera; restore that value or delete the row"
        ) from None
