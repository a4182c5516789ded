"""No SQL outside core: the window and the command line read the results store through
core.store only, so that a change of its tables, its locking or its damage handling is made in
one place. Two signs of SQL written elsewhere are looked for in the Python files of app/ and
views/: a call of a method that runs SQL (execute, executemany, executescript, rows_where) and
a string, f-strings included, that reads as SQL. `make check` runs this file."""

from __future__ import annotations

import ast
import re

import pytest

from tests.support import ROOT

RUNS_SQL = {"execute", "executemany", "executescript", "rows_where"}
#: SQL's own words in capitals, as this project writes its queries
SQL = re.compile(
    r"\bSELECT\b.*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\b(CREATE|DROP|ALTER)\s+(TABLE|VIEW|INDEX)\b|\bPRAGMA\s+\w+|\bIS\s+(NOT\s+)?NULL\b"
    r"|\b(ORDER|GROUP)\s+BY\b|^\s*(BEGIN|COMMIT|ROLLBACK)\b",
    re.DOTALL,
)


def findings(source: str, name: str) -> list[str]:
    """'FILE:LINE: what' for each sign of SQL in the Python `source` of the file `name`."""
    nodes = list(ast.walk(ast.parse(source, name)))
    parts = {id(v) for n in nodes if isinstance(n, ast.JoinedStr) for v in n.values}  # read with their f-string
    found = []
    for node in nodes:
        if id(node) in parts:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RUNS_SQL:
            found.append((node.lineno, f"runs SQL ({node.func.attr})"))
        text = _text(node)
        if text is not None and SQL.search(text):
            found.append((node.lineno, f"SQL in a string: {text[:60]!r}"))
    return [f"{name}:{line}: {what}" for line, what in sorted(found)]


def _text(node: ast.AST) -> str | None:
    """The text of a string or an f-string (each replacement field as '?'); None otherwise."""
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "?" for v in node.values)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def test_no_sql_in_app_or_views():
    found = [
        line
        for folder in ("app", "views")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in findings(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, "SQL outside core: give core/store a function for each query and call that\n" + "\n".join(found)


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
