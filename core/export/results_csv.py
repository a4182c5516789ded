"""Results as CSV: every row of the store's results view, or only those on a Pareto front.

Columns are the results view's, in its order. Text cells that a spreadsheet would run
as a formula (starting with =, +, - or @) get a leading apostrophe, as OWASP advises:
operator names come from files and searches."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from core.store import Store

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def results_csv(store: Store) -> str:
    """Every result (measured or not), oldest first."""
    return _csv(store.db["results"].columns_dict, store.results())


def pareto_csv(store: Store, columns: Sequence[str]) -> str:
    """The results on the Pareto front of `columns` (Store.pareto), sorted by the first."""
    return _csv(store.db["results"].columns_dict, store.pareto(columns))


def _csv(header: Iterable[str], rows: Iterable[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(header), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(v) for k, v in row.items()})
    return out.getvalue()


def _cell(value):
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
