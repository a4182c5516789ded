"""The filter grammar of the results: plain words search the text columns, and terms
such as `latency<2`, `accuracy >= 0.9`, `origin=baseline` or `name~conv` compare one
column (spaces around the operator are allowed); `bindings.H=56` compares one size of the
bindings the result was measured at. The window's filter box and
`tessera results --filter` read the same text the same way.

A filter becomes an SQL WHERE clause whose column names come only from the known
fields and whose values are always bound parameters, so nothing typed is ever SQL."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from core.errors import TesseraError, shorten, shown

from .result_fields import BY_NAME, FIELDS, RESULT_FIELDS, TEXT_FIELDS

_OPERATORS = r"<=|>=|!=|=|<|>|~"
_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME = re.compile(rf"{_IDENTIFIER}(?:\.{_IDENTIFIER})?")  # a column, or bindings.<variable>
_TERM = re.compile(rf"^({_NAME.pattern})\s*({_OPERATORS})\s*(.*)$", re.DOTALL)
_NAME_AND_OPERATOR = re.compile(rf"{_NAME.pattern}({_OPERATORS})")
SIZE_PREFIX = "bindings."
_STARTS_WITH_OPERATOR = re.compile(rf"^({_OPERATORS})")
_TRUE, _FALSE = {"yes", "true", "1"}, {"no", "false", "0"}
#: terms a filter may have: each is a condition of one SQL expression, whose depth SQLite bounds (1,000)
MAX_TERMS = 256


class FilterError(TesseraError):
    """A filter term names an unknown column, compares a number column with text, or the
    text cannot be split into words (an open quote)."""


@dataclass(frozen=True)
class ResultFilter:
    """A parsed filter: the WHERE clause ('' for everything) and its parameters."""

    where: str = ""
    args: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.where)

    def and_(self, clause: str, *args) -> ResultFilter:
        """This filter and one more condition."""
        return ResultFilter(" AND ".join(filter(None, [self.where, clause])), (*self.args, *args))


def _like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _terms(text: str) -> list[str]:
    """The words of the filter, with `name < value` joined into one term whatever the
    spaces around the operator."""
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise FilterError(f"cannot read the filter: {e}") from None
    terms: list[str] = []
    for word in words:
        if terms and (
            (_NAME.fullmatch(terms[-1]) and _STARTS_WITH_OPERATOR.match(word))
            or _NAME_AND_OPERATOR.fullmatch(terms[-1])
        ):
            terms[-1] += word
        else:
            terms.append(word)
    return terms


def sizes_filter(sizes: dict[str, int]) -> str:
    """The filter text that keeps the results measured with these sizes (others may vary)."""
    return " ".join(f"{SIZE_PREFIX}{var}={value}" for var, value in sizes.items())


def parse_filter(text: str) -> ResultFilter:
    """The filter typed by a user; FilterError naming the term that is wrong."""
    clauses: list[str] = []
    args: list[object] = []
    terms = _terms(text)
    if len(terms) > MAX_TERMS:
        raise FilterError(f"the filter has {len(terms):,} terms; at most {MAX_TERMS} are read: narrow it down")
    for term in terms:
        m = _TERM.match(term)
        if m is None:
            clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in TEXT_FIELDS) + ")")
            args += [_like(term)] * len(TEXT_FIELDS)
            continue
        name, op, value = m.groups()
        if name.lower().startswith(SIZE_PREFIX):  # one size, as a number; its JSON path is bound like the value
            if op == "~":
                raise FilterError(
                    f"{shown(term)}: a size compares as a number (=, !=, <, <=, >, >=), e.g. bindings.H=56"
                )
            clauses.append(f"json_extract(bindings, ?) {op} ?")
            args += [f"$.{name[len(SIZE_PREFIX) :]}", _number(value, name, term)]
            continue
        field = BY_NAME.get(name.lower())
        if field is None:
            known = ", ".join(sorted({f.short for f in RESULT_FIELDS}))
            raise FilterError(f"unknown column {shown(name)} in {shown(term)}; columns: {known}")
        if not value:
            raise FilterError(f"{shown(term)}: a value is missing after {shown(op)}")
        clause, value = _compare(field.key, op, value, term)
        clauses.append(clause)
        args.append(value)
    return ResultFilter(" AND ".join(clauses), tuple(args))


def _number(value: str, name: str, term: str) -> float:
    if not value:
        raise FilterError(f"{shown(term)}: a value is missing")
    try:
        return float(value)
    except ValueError:
        raise FilterError(f"{shown(term)}: {shorten(name)} is a number, {shown(value)} is not a number") from None


def _compare(key: str, op: str, value: str, term: str) -> tuple[str, object]:
    if op == "~":
        return f"{key} LIKE ? ESCAPE '\\'", _like(value)
    if key == "tuned":
        if value.lower() not in _TRUE | _FALSE or op not in ("=", "!="):
            raise FilterError(f"{shown(term)}: write tuned=yes or tuned=no")
        return f"{key} {op} ?", int(value.lower() in _TRUE)
    if not FIELDS[key].numeric:
        return f"{key} {op} ?", value
    try:
        number = float(value)
    except ValueError:
        raise FilterError(f"{shown(term)}: {key} is a number column, {shown(value)} is not a number") from None
    return f"{key} {op} ?", number
