"""Frozen dataclasses read from and written to JSON: the one mechanism behind job payloads and
results (core.jobs.contract), measurements and scores (core.store). Reading refuses what a
consumer would otherwise trip over later: a field it does not know (a typo, or an object of
another kind), a field that is missing, a value of the wrong type; each message names the
field and the object, and is raised as the caller's own error class.

Fields may be plain JSON values (int, float, str, bool, dict, list), tuples (lists in
JSON), None where the annotation allows it, or other dataclasses (nested objects), whose
own __post_init__ checks their values. A number is never NaN: one read is refused, and so is
a record made with one."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from functools import cache
from typing import Any, ClassVar, NoReturn, Self, TypeVar

from core.errors import shorten, shown

T = TypeVar("T")


class JsonRecord:
    """Base of a frozen dataclass kept as JSON: `from_dict` reads one and `to_dict` writes it.
    `what` names it in messages ("the measurement") and `error` is the error class they are
    raised as."""

    what: ClassVar[str]
    error: ClassVar[type[Exception]]

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if _has_nan(value):
                refuse(self, f.name, "a number" if isinstance(value, float) else "numbers, none NaN", value)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        return read(cls, data, cls.what, cls.error)

    def to_dict(self) -> dict:
        return write(self)


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, tuple) and any(_has_nan(v) for v in value)


def refuse(record: JsonRecord | type[JsonRecord], name: str, expected: str, value: object) -> NoReturn:
    """Raise the record's error: its field `name` must be `expected`, not `value`."""
    raise record.error(f"{record.what}: {name} must be {expected}, got {shown(value)}")


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _label(kind: Any) -> str:
    if kind is type(None):
        return "null"
    if dataclasses.is_dataclass(kind):
        return "an object"
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_label(a) for a in typing.get_args(kind))
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of which each is {_label(args[0])}"
        return f"a list of {len(args)} items, each {' then '.join(_label(a) for a in dict.fromkeys(args))}"
    if origin is list:
        return "a list"
    if origin is dict:
        return "an object"
    names = {int: "a whole number", float: "a number", str: "a string", bool: "true or false", dict: "an object"}
    return names.get(kind, getattr(kind, "__name__", str(kind)))


def _value(kind: Any, value: Any, where: str, error: type[Exception]) -> Any:
    """`value` read as `kind`; `error` naming `where` if it is not one."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [o for o in typing.get_args(kind) if o is not type(None)]
        if value is None and len(options) < len(typing.get_args(kind)):
            return None
        if len(options) == 1:  # X | None with a value: X's own error says what is wrong in it
            return _value(options[0], value, where, error)
        for option in options:
            try:
                return _value(option, value, where, error)
            except error:
                continue
    elif kind is Any:
        return value
    elif kind is type(None):
        if value is None:
            return None
    elif isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if isinstance(value, dict):
            return read(kind, value, where, error)
    elif origin is tuple:
        args = typing.get_args(kind)
        if isinstance(value, (list, tuple)):
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(_value(args[0], v, f"{where}[{i}]", error) for i, v in enumerate(value))
            if len(value) == len(args):
                return tuple(_value(a, v, f"{where}[{i}]", error) for i, (a, v) in enumerate(zip(args, value)))
    elif origin is dict:
        if isinstance(value, dict):
            item = typing.get_args(kind)[1]
            return {k: _value(item, v, f"{where}[{shown(k)}]", error) for k, v in value.items()}
    elif origin is list or kind in (list, dict):
        if isinstance(value, list if (origin or kind) is list else dict):
            return value
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(kind, type) and isinstance(value, kind):
        return value
    raise error(f"{where} must be {_label(kind)}, got {shown(value)}")


def read(cls: type[T], data: Any, what: str, error: type[Exception]) -> T:
    """An instance of the dataclass `cls` from JSON `data`; `what` names it in messages
    (e.g. "the measure payload"), which are raised as `error`."""
    if not isinstance(data, dict):
        raise error(f"{what} must be an object, got {shown(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise error(
            f"{what} has unknown field(s) {shorten(', '.join(map(repr, unknown)))}; it takes {', '.join(fields)}"
        )
    missing = [
        name
        for name, f in fields.items()
        if name not in data and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise error(f"{what} is missing field(s) {', '.join(map(repr, missing))}")
    hints = _hints(typing.cast(Any, cls))
    return cls(**{name: _value(hints[name], value, f"{what}: {name}", error) for name, value in data.items()})


def write(obj: Any) -> dict:
    """The JSON object of a dataclass instance (tuples become lists)."""
    return _json(dataclasses.asdict(obj))


def _json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value
