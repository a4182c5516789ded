"""GSPC as a kernel (core.compile.kernels.protocol): the grouped spatial pack convolution of
core.codegen.gspc_schedule, fed its weights packed ahead of time, labelled with its layout
and tile sizes, and tuned over its tile grid.

Tuning times an explicit grid (kernels.grid) over the kernel's tile sizes (T_O, T_I and the
register block of output columns), each point built with the hand-written schedule, not
MetaSchedule: T_O and T_I set the shapes of the packed buffers. `tune_trials` caps the points
measured, nearest the defaults first; the records are gspc_grid.json."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...codegen.gspc_schedule import (
    Tiles,
    candidate_tiles,
    default_tiles,
    gspc_module,
    pack_weights,
    simd_lanes,
)
from ..algorithms import gspc_convolution
from ..errors import CompileError
from ..place import Place
from ..settings import Settings
from ..tune import Tuning
from ..workload import Workload
from .grid import fingerprint, time_module, tune_grid
from .protocol import Progress, Tuned, Variant, host_arguments

GRID_FILE = "gspc_grid.json"


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
        self.tiles, trials, new = tune_grid(
            "GSPC", grid, self._key, self._time, work_dir / GRID_FILE, progress, check_cancelled
        )
        best = self._variant(self.tiles, "tuned")
        return Tuned(Tuning(work_dir, best.module, trials, new), (best,))

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

    def _key(self, tiles: Tiles) -> str:
        module = gspc_module(self.conv, self.workload.batch, tiles)
        return f"T_O={tiles.t_o},T_I={tiles.t_i},columns={tiles.w} {fingerprint(module)}"

    def _time(self, tiles: Tiles) -> float | None:
        """ms of one run on random data, None if it does not build."""
        rng = np.random.default_rng(0)
        batch = self.workload.batch
        x, w = (
            rng.standard_normal(s, dtype=np.float32) for s in [(batch, *self.conv.input_shape), self.conv.weight_shape]
        )
        module = gspc_module(self.conv, batch, tiles)
        return time_module(module, self.place, [x, pack_weights(self.conv, w, tiles)], (batch, *self.conv.output_shape))
