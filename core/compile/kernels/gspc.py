"""GSPC as a kernel (core.compile.kernels.protocol): the grouped spatial pack convolution of
core.codegen.gspc_schedule, fed its weights packed ahead of time, labelled with its layout
and tile sizes, and tuned over its tile grid.

Tuning is an explicit grid over the kernel's tile sizes (T_O, T_I and the register block
of output columns), each point built with the hand-written schedule and timed, not
MetaSchedule: T_O and T_I set the shapes of the packed buffers, which MetaSchedule cannot
change (it reschedules loops over fixed buffers), and the grid is small (tens of points,
under a second to build each), so measuring them beats searching with a cost model.
`tune_trials` caps the points measured, nearest the defaults first (so the untuned tiles are
among them and need no timing of their own); measured points are kept beside the
MetaSchedule database (gspc_grid.json) and count towards later budgets, as MetaSchedule's
trials do. A point is timed like a MetaSchedule trial, in a session of its own on an RPC
device."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tvm

from ...atomic import write_text_atomically
from ...codegen.gspc_schedule import (
    Tiles,
    candidate_tiles,
    default_tiles,
    gspc_module,
    pack_weights,
    simd_lanes,
)
from ..algorithms import gspc_convolution
from ..errors import CompileError, TuningError
from ..place import Place
from ..settings import Settings
from ..timing import time_kernel
from ..tune import Tuning
from ..workload import Workload
from .protocol import Progress, Tuned, Variant, host_arguments

GRID_FILE = "gspc_grid.json"
POINT = {"number": 1, "repeat": 5, "min_repeat_ms": 30}  # a grid point: the fastest of five repeats


class GspcKernel:
    """One operator's GSPC kernel: the tiles in use (the defaults, the request's T_O and T_I,
    or the grid's best after `tune`)."""

    def __init__(self, workload: Workload, place: Place, settings: Settings):
        self.conv = gspc_convolution(workload.graph, workload.bindings)
        if place.target.kind.name != "llvm":
            raise CompileError(
                f"algorithm 'gspc' has a CPU schedule (LLVM targets); this device's target is {place.target.kind.name!r}"
            )
        self.workload, self.place, self.settings = workload, place, settings
        self.lanes = simd_lanes(place.target)
        self.fixed = settings.tiles  # (T_O, T_I) the request asks for; the grid then varies the column block only
        self.tiles = default_tiles(self.conv, self.lanes, settings.tiles)

    def untuned(self) -> Variant:
        return self._variant(self.tiles, "untuned")

    def tune(self, progress: Progress, check_cancelled: Callable[[], None]) -> Tuned:
        """Time up to `tune_trials` grid points (earlier ones in the records count), keep the fastest."""
        work_dir = self.settings.tuning_folder()
        grid = candidate_tiles(self.conv, self.lanes, self.fixed)[: self.settings.tune_trials]
        path = work_dir / GRID_FILE
        records = _read(path)
        new = 0
        for i, tiles in enumerate(grid):
            check_cancelled()
            if _key(tiles) not in records:
                records[_key(tiles)] = self._time(tiles)
                new += 1
                write_text_atomically(path, json.dumps(records, indent=1))
            ms = records[_key(tiles)]
            progress(
                0.05 + 0.75 * (i + 1) / len(grid),
                f"GSPC tile grid: {i + 1} of {len(grid)} "
                f"(T_O={tiles.t_o}, T_I={tiles.t_i}, {tiles.w} columns): "
                + (f"{ms:.3g} ms" if ms is not None else "failed"),
            )
        timed = [(ms, t) for t in grid if (ms := records[_key(t)]) is not None]
        if not timed:
            raise TuningError(f"no GSPC tile configuration built and ran (records in {path})")
        self.tiles = min(timed, key=lambda pair: pair[0])[1]
        best = self._variant(self.tiles, "tuned")
        return Tuned(Tuning(work_dir, best.module, [(i, records[_key(t)]) for i, t in enumerate(grid)], new), (best,))

    def _variant(self, tiles: Tiles, source: str) -> Variant:
        """The kernel with these tiles, fed the input, the torch module's weight packed for
        them ahead of time, and an output buffer."""
        w = self.workload
        packed = pack_weights(self.conv, w.weight(self.conv.weight), tiles)
        args = host_arguments(w, [packed], (w.batch, *self.conv.output_shape))
        details = {
            "convolution": self.conv.spec.describe(),
            "tiles": {"T_O": tiles.t_o, "T_I": tiles.t_i, "columns": tiles.w},
        }
        return Variant(
            gspc_module(self.conv, w.batch, tiles), args, self.settings.algorithm, source, tiles.layout(), details
        )

    def _time(self, tiles: Tiles) -> float | None:
        """ms of one run on random data, None if it does not build."""
        try:
            executable = tvm.compile(gspc_module(self.conv, self.workload.batch, tiles), target=self.place.target)
        except (RuntimeError, ValueError):
            return None
        rng = np.random.default_rng(0)
        batch = self.workload.batch
        x, w = (
            rng.standard_normal(s, dtype=np.float32) for s in [(batch, *self.conv.input_shape), self.conv.weight_shape]
        )
        args = [
            tvm.runtime.tensor(x),
            tvm.runtime.tensor(pack_weights(self.conv, w, tiles)),
            tvm.runtime.empty((batch, *self.conv.output_shape), "float32"),
        ]
        with self.place.trial(executable, args) as kernel:
            return min(time_kernel(kernel.module, kernel.device, kernel.args, **POINT).runs_ms)


def _key(tiles: Tiles) -> str:
    return f"T_O={tiles.t_o},T_I={tiles.t_i},columns={tiles.w}"


def _read(path: Path) -> dict[str, float | None]:
    if not path.exists():
        return {}
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(records, dict) or not all(v is None or isinstance(v, (int, float)) for v in records.values()):
            raise ValueError("not an object of latencies")
    except ValueError as e:
        raise TuningError(f"GSPC tuning records {path} are damaged ({e}); delete the file to tune again") from None
    return records
