"""Concrete values for symbolic variables, as typed on a command line or in the GUI."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from .errors import BindingError
from .symbolic import MAX_SIZE

_ITEM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(-?\d+)\s*$")


def parse_bindings(text: str | None) -> dict[str, int]:
    """'C_in=64, H=56' -> {'C_in': 64, 'H': 56}; every value a positive integer."""
    result: dict[str, int] = {}
    if not text or not text.strip():
        return result
    for item in text.split(","):
        if not item.strip():
            continue
        m = _ITEM.match(item)
        if not m:
            raise BindingError(f"cannot read binding {item.strip()!r}: expected NAME=INTEGER, e.g. C_in=64")
        name, digits = m.group(1), m.group(2).lstrip("0") or "0"
        if len(digits) > len(str(MAX_SIZE)) or int(digits) > MAX_SIZE:
            raise BindingError(
                f"binding {name}={digits[:12]}{'...' if len(digits) > 12 else ''}: sizes go up to 2^31 - 1 "
                f"({MAX_SIZE:,}), the largest TVM indexes with 32 bits"
            )
        value = int(digits)
        if value <= 0:
            raise BindingError(f"binding {name}={value}: sizes must be positive integers")
        if name in result and result[name] != value:
            raise BindingError(f"variable {name} is bound twice ({result[name]} and {value})")
        result[name] = value
    return result


def format_bindings(bindings: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in bindings.items())


def check_names(bindings: dict[str, int], known: Iterable[str], owner: str) -> None:
    """BindingError if `bindings` name a variable `owner` (an operator, a file) does not
    have: a typo such as Cin=64 would otherwise be ignored and the default size used."""
    known = sorted(known)
    unknown = [name for name in bindings if name not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, 1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise BindingError(f"no variable {unknown[0]} in {owner}{hint} (variables: {', '.join(known) or 'none'})")
