"""Tuning over an explicit grid of tile sizes, as the hand-scheduled kernels (gspc, separable)
are tuned: their tiles set the shapes of packed buffers, which MetaSchedule cannot change (it
reschedules loops over fixed buffers), and their grids are small (tens of points, under a
second to build each), so timing every point beats searching with a cost model.

The points are timed in the order given (nearest the defaults first, so a small budget still
covers the untuned tiles), each like a MetaSchedule trial (in a session of its own on an RPC
device). Timed points are kept in a JSON file beside the MetaSchedule database, keyed by their
tiles and the `fingerprint` of their kernel, and count towards later budgets, as MetaSchedule's
trials do."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import tvm

from ...atomic import write_text_atomically
from ..errors import TuningError
from ..place import Place
from ..timing import time_kernel
from .protocol import Progress

POINT = {"number": 1, "repeat": 5, "min_repeat_ms": 30}  # a grid point: the fastest of five repeats

P = TypeVar("P")


def tune_grid(
    what: str,
    grid: Sequence[P],
    key: Callable[[P], str],
    time_point: Callable[[P], float | None],
    path: Path,
    progress: Progress,
    check_cancelled: Callable[[], None],
) -> tuple[P, list[tuple[int, float | None]], int]:
    """Time every point of `grid` not yet in the records at `path` (`key` names a point there,
    `time_point` gives its ms or None when it does not build); -> the fastest point, the
    trials (index in the grid, ms) and how many were timed now. `what` names the kernel in
    progress messages and errors (e.g. 'GSPC'); `progress` hears the share of the grid done."""
    records = _read(path, what)
    keys = [key(point) for point in grid]
    new = 0
    progress(0.0, f"{what} tile grid: {len(grid)} points")
    for i, (point, name) in enumerate(zip(grid, keys)):
        check_cancelled()
        if name not in records:
            records[name] = time_point(point)
            new += 1
            write_text_atomically(path, json.dumps(records, indent=1))
        ms = records[name]
        progress(
            (i + 1) / len(grid),
            f"{what} tile grid: {i + 1} of {len(grid)} ({name}): " + (f"{ms:.3g} ms" if ms is not None else "failed"),
        )
    timings = [records[name] for name in keys]
    timed = [(ms, point) for point, ms in zip(grid, timings) if ms is not None]
    if not timed:
        raise TuningError(f"no {what} tile configuration built and ran (records in {path})")
    best = min(timed, key=lambda pair: pair[0])[1]
    return best, list(enumerate(timings)), new


def fingerprint(module: tvm.IRModule) -> str:
    """A short hash of a point's scheduled kernel, for its records key: a point timed with an
    older schedule (the kernel's code changed since) is then timed again, not trusted."""
    return hashlib.sha256(module.script().encode()).hexdigest()[:12]


def time_module(module: tvm.IRModule, place: Place, inputs: Sequence[np.ndarray], output_shape) -> float | None:
    """ms of one run of `module` on `inputs` (arrays in its argument order, the output buffer
    of `output_shape` last) at `place`; None if it does not build."""
    try:
        executable = tvm.compile(module, target=place.target)
    except (RuntimeError, ValueError):
        return None
    args = [*(tvm.runtime.tensor(np.ascontiguousarray(a)) for a in inputs), tvm.runtime.empty(output_shape, "float32")]
    with place.trial(executable, args) as kernel:
        return min(time_kernel(kernel.module, kernel.device, kernel.args, **POINT).runs_ms)


def _read(path: Path, what: str) -> dict[str, float | None]:
    if not path.exists():
        return {}
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(records, dict) or not all(v is None or isinstance(v, (int, float)) for v in records.values()):
            raise ValueError("not an object of latencies")
    except ValueError as e:
        raise TuningError(f"{what} tuning records {path} are damaged ({e}); delete the file to tune again") from None
    return records
