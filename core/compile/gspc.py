"""GSPC as a measured algorithm: what core.compile.measure needs to build, tune, feed and
label the kernel of core.codegen.gspc instead of TVM's default lowering.

Tuning is an explicit grid over the kernel's tile sizes (T_O, T_I and the register block
of output columns), each point built with the hand-written schedule and timed, not
MetaSchedule: T_O and T_I set the shapes of the packed buffers, which MetaSchedule cannot
change (it reschedules loops over fixed buffers), and the grid is small (tens of points,
under a second to build each), so measuring them beats searching with a cost model.
`tune_trials` caps the points measured, nearest the defaults first; measured points are
kept beside the MetaSchedule database (gspc_grid.json) and count towards later budgets,
as MetaSchedule's trials do."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import torch
import tvm

from ..atomic import write_text_atomically
from ..codegen.gspc import Tiles, candidate_tiles, default_tiles, gspc_module, pack_weights, simd_lanes
from ..devices.session import open_session
from ..ir.graph import OperatorGraph
from .algorithms import gspc_convolution
from .errors import CompileError, TuningError
from .remote import upload
from .tune import Tuning

GRID_FILE = "gspc_grid.json"


class GspcKernel:
    """One operator's GSPC kernel: the tiles in use (the defaults, the request's T_O and
    T_I, or the grid's best after `tune`), its module and its arguments."""

    def __init__(
        self,
        graph: OperatorGraph,
        bindings: Mapping[str, int] | None,
        batch: int,
        target: tvm.target.Target,
        tiles: tuple[int, int] | None = None,
        remote=None,
    ):
        """remote: the entered core.compile.remote.RemoteDevice the kernel runs on, None for this CPU."""
        self.conv = gspc_convolution(graph, bindings)
        if target.kind.name != "llvm":
            raise CompileError(
                f"algorithm 'gspc' has a CPU schedule (LLVM targets); this device's target is {target.kind.name!r}"
            )
        self.batch, self.target, self.remote, self.lanes = batch, target, remote, simd_lanes(target)
        self.fixed = tiles  # (T_O, T_I) the request asks for; the grid then varies the column block only
        self.tiles = default_tiles(self.conv, self.lanes, tiles)

    def module(self) -> tvm.IRModule:
        return gspc_module(self.conv, self.batch, self.tiles)

    def arguments(self, x: torch.Tensor, module: torch.nn.Module) -> list:
        """Input, the module's weight packed ahead of time, an output buffer."""
        dev = tvm.cpu()
        weight = dict(module.named_parameters())[self.conv.weight].detach().numpy()
        return [
            tvm.runtime.tensor(x.numpy(), dev),
            tvm.runtime.tensor(pack_weights(self.conv, weight, self.tiles), dev),
            tvm.runtime.empty((self.batch, *self.conv.output_shape), "float32", dev),
        ]

    def tune(
        self, work_dir: Path, trials: int, progress: Callable[[float, str], None], check_cancelled: Callable[[], None]
    ) -> Tuning:
        """Time up to `trials` grid points (earlier ones in work_dir count), keep the fastest."""
        grid = candidate_tiles(self.conv, self.lanes, self.fixed)[:trials]
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
        timed = [(records[_key(t)], t) for t in grid if records[_key(t)] is not None]
        if not timed:
            raise TuningError(f"no GSPC tile configuration built and ran (records in {path})")
        self.tiles = min(timed, key=lambda pair: pair[0])[1]
        return Tuning(work_dir, self.module(), [(i, records[_key(t)]) for i, t in enumerate(grid)], new)

    def fields(self, tuned: bool) -> dict:
        """The result's fields that say what ran (they replace the default lowering's)."""
        return {
            "algorithm": "gspc",
            "layout": self.tiles.layout(),
            "schedule_source": "tuned" if tuned else "untuned",
            "cost_model": None,
            "convolution": self.conv.spec.describe(),
            "tiles": {"T_O": self.tiles.t_o, "T_I": self.tiles.t_i, "columns": self.tiles.w},
        }

    def _time(self, tiles: Tiles) -> float | None:
        """ms of one run on random data (the fastest of five repeats: the least disturbed by
        other work on the machine), None if it does not build. On an RPC device each point
        has a session of its own, dropped (freeing the server) when this returns."""
        try:
            executable = tvm.compile(gspc_module(self.conv, self.batch, tiles), target=self.target)
        except (RuntimeError, ValueError):
            return None
        session = open_session(self.remote.device, self.remote.device.wait) if self.remote is not None else None
        rng = np.random.default_rng(0)
        x, w = (
            rng.standard_normal(s, dtype=np.float32)
            for s in [(self.batch, *self.conv.input_shape), self.conv.weight_shape]
        )
        try:
            kernel, dev = (
                (executable.mod, tvm.cpu())
                if session is None
                else (upload(session, executable, self.target), session.device_for(self.target))
            )
            args = [
                tvm.runtime.tensor(x, dev),
                tvm.runtime.tensor(pack_weights(self.conv, w, tiles), dev),
                tvm.runtime.empty((self.batch, *self.conv.output_shape), "float32", dev),
            ]
            evaluator = kernel.time_evaluator("main", dev, number=1, repeat=5, min_repeat_ms=30)
            return min(evaluator(*args).results) * 1e3
        except RuntimeError as e:
            if session is None:
                raise
            raise session.translate(e, "timing a GSPC tile configuration") from None


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
