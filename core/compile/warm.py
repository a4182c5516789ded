"""Make `import tvm.s_tir.tensor_intrin` fast enough for MetaSchedule (docs/tvm.md).

With torch loaded, that import spends 35-75 s in `inspect.getmodule`, called by
`@T.prim_func` for every intrinsic; every builder worker repeats it and times
out. Memoising `inspect.getmodule` per file name during the import brings it to
a few seconds. This module imports nothing heavy, since MetaSchedule pickles
`warm_tensor_intrin` by reference as its builders' initializer."""

from __future__ import annotations

import inspect


def warm_tensor_intrin() -> None:
    original, cache = inspect.getmodule, {}

    def cached(obj, _filename=None):
        if _filename is None:
            return original(obj)
        if _filename not in cache:
            cache[_filename] = original(obj, _filename)
        return cache[_filename]

    inspect.getmodule = cached
    try:
        import tvm.s_tir.tensor_intrin  # noqa: F401
    finally:
        inspect.getmodule = original
