"""The results browser's filter box: words search the text columns, and terms such as
`latency<2`, `accuracy>=0.9`, `origin=baseline` or `name~conv` compare one column.

The text becomes an SQL WHERE clause whose column names come only from the known
columns and whose values are always bound parameters, so nothing typed is ever SQL."""

from __future__ import annotations

import re
import shlex

from core.ir.errors import TesseraError

from .columns import BY_KEY, COLUMNS

TEXT_COLUMNS = ("operator_name", "origin", "device_name", "bindings")
_TERM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|!=|=|<|>|~)\s*(.*)$")
_NAMES = {**{c.key: c for c in COLUMNS}, **{a: c for c in COLUMNS for a in c.aliases}}
_TRUE, _FALSE = {"yes", "true", "1"}, {"no", "false", "0"}


class FilterError(TesseraError):
    """A filter term names an unknown column or compares a number column with text."""


def _like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def parse_filter(text: str) -> tuple[str, list]:
    """-> (WHERE clause without 'WHERE', or '' for everything; its parameters)."""
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise FilterError(f"cannot read the filter: {e}") from None
    clauses, args = [], []
    for word in words:
        m = _TERM.match(word)
        if m is None:
            clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in TEXT_COLUMNS) + ")")
            args += [_like(word)] * len(TEXT_COLUMNS)
            continue
        name, op, value = m.groups()
        column = _NAMES.get(name.lower())
        if column is None:
            known = ", ".join(sorted({c.aliases[0] if c.aliases else c.key for c in COLUMNS}))
            raise FilterError(f"unknown column {name!r} in {word!r}; columns: {known}")
        clause, value = _compare(column.key, op, value, word, column.numeric)
        clauses.append(clause)
        args.append(value)
    return " AND ".join(clauses), args


def _compare(key: str, op: str, value: str, word: str, numeric: bool) -> tuple[str, object]:
    if op == "~":
        return f"{key} LIKE ? ESCAPE '\\'", _like(value)
    if key == "tuned":
        if value.lower() not in _TRUE | _FALSE or op not in ("=", "!="):
            raise FilterError(f"{word!r}: write tuned=yes or tuned=no")
        return f"{key} {op} ?", int(value.lower() in _TRUE)
    if not numeric:
        return f"{key} {op} ?", value
    try:
        number = float(value)
    except ValueError:
        raise FilterError(f"{word!r}: {BY_KEY[key].title} is a number column, {value!r} is not a number") from None
    return f"{key} {op} ?", number
