"""Resolve 'package.module:function' paths, the way job kinds and isolated calls name their code.

A path string (not a function object) is what crosses process boundaries, so
the child imports heavy modules (TVM, torch) itself and the caller never does.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from .errors import TargetError


def resolve(target: str) -> Callable:
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise TargetError(f"{target!r} is not a 'package.module:function' path")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetError(f"cannot import {module_name!r} (for {target!r}): {exc}") from exc
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{module_name!r} has no attribute {attr!r} (for {target!r})") from None
    if not callable(obj):
        raise TargetError(f"{target!r} names a {type(obj).__name__}, not a function")
    return obj
