"""The check that keeps SQL in core/store (tests/sql_seam.py, run by `make check`) finds it."""

import pytest

from tests.sql_seam import findings


@pytest.mark.parametrize(
    "source",
    [
        'rows = store.db.execute("SELECT origin FROM results")',
        "front = store.results(f'{x} IS NOT NULL', [])",
        'conn.execute("BEGIN")',
        'db["results"].rows_where(where)',
        'sums = ", ".join(f"SUM({x} IS NOT NULL AND {y} IS NOT NULL)" for x, y in FRONTS)',
        'text = """\n  DELETE FROM measurements\n  WHERE id = ?"""',
    ],
)
def test_sql_outside_core_is_found(source):
    assert findings(source, "views/x.py")


@pytest.mark.parametrize(
    "source",
    [
        'label = "Select a front, then an origin"',
        'note = f"No results from {origin} have both {x} and {y} yet."',
        "store.results_where(ResultFilter())",
        'hint = "sorted by latency; is null shown last"',
    ],
)
def test_words_that_are_not_sql_pass(source):
    assert findings(source, "views/x.py") == []
