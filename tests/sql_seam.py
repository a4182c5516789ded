"""`python -m tests.sql_seam FOLDER...` (run by `make check`): fail on SQL outside core/store.

The window and the command line read the results store through core.store only, so that a
change of its tables, its locking or its damage handling is made in one place. This finds,
in the Python files under the folders given, the two signs of SQL written elsewhere: a call
of a method that runs SQL (execute, executemany, executescript, rows_where) and a string,
f-strings included, that reads as SQL. Exit status 1, one line per finding, if any."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

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


def main(folders: list[str]) -> int:
    found = [
        line
        for folder in folders
        for path in sorted(Path(folder).rglob("*.py"))
        for line in findings(path.read_text(encoding="utf-8"), str(path))
    ]
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} sign(s) of SQL outside core: give core/store a function for each query and call that")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
