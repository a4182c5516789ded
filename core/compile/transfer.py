"""Transfer-tuning (Gibson; docs/papers.md, 5): reuse tuned schedules on new kernels of their class.

Every tuned schedule of the new kernel's class (core.compile.kernel_class) is
replayed on it. MetaSchedule traces are size-agnostic except for their tile
sizes: each `sample_perfect_tile` decision names factors of the old loop
extent. They are re-derived for the new extent while the trace is replayed:
innermost first, each old factor is replaced by its greatest common divisor
with what is left of the new extent (so an inner factor that divides stays as it
was, vector-friendly powers of two shrink rather than vanish), and the outermost
factor takes the rest. (TVM's own fallback for a stale decision puts the whole
remainder into the innermost tile, which undoes the tiling.) The trace is replayed
without its postprocessing steps; the target's postprocessors then run again on
the new kernel, as MetaSchedule does for every candidate.

A schedule that does not apply (another loop nest, tiles that cannot be
re-derived, postprocessing refuses it, the build fails, the output is wrong) is
skipped with a short reason. The others are built, checked against a reference
output and timed like MetaSchedule's runner does; the fastest wins if it beats
the untuned default, which stays otherwise. Imports TVM: worker processes only."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import tvm
from tvm import s_tir
from tvm.s_tir import meta_schedule as ms

from .errors import CompileError
from .kernel_class import KernelClass
from .place import Loaded, Place
from .timing import TRIAL, check_close, time_kernel
from .transfer_records import TunedSchedule
from .warm import warm_tensor_intrin


class NotApplicable(Exception):
    """A tuned schedule cannot be used on this kernel; the message says why, briefly."""


def rederive_tiles(extent: int, factors: Sequence[int]) -> list[int]:
    """Tile factors of `extent` shaped like `factors` (outermost first): innermost first, each
    factor becomes its gcd with what is left of the extent; the outermost takes the rest."""
    inner, rest = [], extent
    for factor in reversed(factors[1:]):
        kept = math.gcd(int(factor), rest)
        inner.append(kept)
        rest //= kept
    return [rest, *reversed(inner)]


def postprocessors(mod: tvm.IRModule, target: tvm.target.Target) -> list:
    """The target's MetaSchedule postprocessors, initialised for `mod`."""
    warm_tensor_intrin()
    context = ms.TuneContext(mod, target=target, space_generator="post-order-apply", task_name="main")
    return list(context.space_generator.postprocs)


def apply_schedule(mod: tvm.IRModule, trace: s_tir.Trace, postprocs: Sequence) -> s_tir.Schedule:
    """`mod` scheduled by `trace` with re-derived tile sizes, postprocessed (the schedule's trace
    records the postprocessing too, as MetaSchedule's records do); NotApplicable if not."""
    sch = s_tir.Schedule(mod)
    problems: list[NotApplicable] = []

    def decide(inst, inputs, attrs, decision):
        if inst.kind.name != "SamplePerfectTile":
            return decision
        try:
            return _tiles(sch, inputs[0], int(attrs[0]), decision)
        except NotApplicable as e:
            problems.append(e)
            raise

    try:
        trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=decide)
    except (RuntimeError, ValueError, TypeError) as e:  # TVM's errors (ScheduleError, InternalError, ...)
        if problems:
            raise problems[0] from None
        raise NotApplicable(f"does not apply: {_brief(e)}") from None
    sch.enter_postproc()
    for postproc in postprocs:
        if not postproc.apply(sch):
            raise NotApplicable(f"postprocessing refuses it ({type(postproc).__name__})")
    return sch


def _tiles(sch: s_tir.Schedule, loop, n: int, decision) -> list[int]:
    extent = sch.get(loop).extent
    if not isinstance(extent, tvm.tirx.IntImm):
        raise NotApplicable(f"tiles cannot be re-derived: a loop of extent {extent} is not of constant size")
    factors = [int(f) for f in decision]
    if len(factors) != n or n < 2:
        raise NotApplicable(f"tiles cannot be re-derived: {len(factors)} factors recorded for a {n}-way split")
    return rederive_tiles(int(extent), factors)


def _brief(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = next(
        (line for line in lines if not line.startswith(("Traceback", "File ", "0:", "1:"))), type(error).__name__
    )
    return text if len(text) <= 160 else text[:157] + "..."


class Bench:
    """One kernel's arguments (host tensors, the output last) and its reference output: builds
    a schedule for the place it runs (core.compile.place), checks its output, times it there."""

    def __init__(self, place: Place, args: list, reference: np.ndarray, name: str):
        self.place, self.args, self.reference, self.name = place, args, reference, name

    @classmethod
    def of_kernel(cls, mod: tvm.IRModule, place: Place, name: str, seed: int = 0) -> Bench:
        """Random inputs for a kernel checked without its torch counterpart (a task of a
        network, a tuning record): the untuned default build at `place` gives the reference."""
        rng = np.random.default_rng(seed)
        func = next(iter(mod.functions.values()))
        args = [
            tvm.runtime.tensor(_random(tuple(int(d) for d in arg.shape), arg.dtype, rng))
            for arg in ms.arg_info.ArgInfo.from_prim_func(func)
        ]
        bench = cls(place, args, np.empty(0), name)
        bench.reference = bench.build(mod).run().copy()
        return bench

    def build(self, mod: tvm.IRModule) -> Loaded:
        try:
            executable = tvm.compile(mod, target=self.place.target)
        except (RuntimeError, ValueError, TypeError) as e:
            raise NotApplicable(f"does not build: {_brief(e)}") from None
        return self.place.load(executable, self.args)

    def check(self, kernel: Loaded) -> float:
        """Run on fresh output (NaN-filled, so unwritten elements show) and compare."""
        out = kernel.args[-1].numpy()
        kernel.args[-1] = tvm.runtime.tensor(np.full_like(out, np.nan if out.dtype.kind == "f" else 0), kernel.device)
        try:
            return check_close(kernel.run(), self.reference, self.name)
        except CompileError as e:
            raise NotApplicable(f"wrong results: {_brief(e)}") from None

    def screen(self, mod: tvm.IRModule) -> float:
        """Build, check and time `mod` as a candidate, as a tuning trial is timed: latency in ms."""
        kernel = self.build(mod)
        self.check(kernel)
        return time_kernel(kernel.module, kernel.device, kernel.args, **TRIAL).median_ms


def _random(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    return np.zeros(shape, dtype=dtype)


@dataclass(frozen=True)
class Tried:
    """One candidate schedule: its latency on the new kernel, or why it was skipped."""

    schedule: TunedSchedule
    latency_ms: float | None = None
    skipped: str | None = None

    def as_dict(self) -> dict:
        return {
            "schedule": self.schedule.name,
            "source_kernel": self.schedule.kernel,
            "source_latency_ms": self.schedule.latency_ms,
            "latency_ms": self.latency_ms,
            "skipped": self.skipped,
        }


@dataclass
class KernelTransfer:
    """What transfer-tuning did for one kernel. `best` is None when no schedule applied or
    none beat the untuned default (`untuned_ms`), which is then kept."""

    kclass: KernelClass
    untuned_ms: float
    tried: list[Tried] = field(default_factory=list)
    best: Tried | None = None
    best_schedule: s_tir.Schedule | None = None  # the best one applied to the kernel (its trace with it)
    search_s: float = 0.0

    @property
    def best_mod(self) -> tvm.IRModule | None:
        return self.best_schedule.mod if self.best_schedule is not None else None

    @property
    def latency_ms(self) -> float:
        best = self.best.latency_ms if self.best is not None else None
        return best if best is not None else self.untuned_ms

    @property
    def applied(self) -> int:
        return sum(t.latency_ms is not None for t in self.tried)

    @property
    def skip_reasons(self) -> dict[str, int]:
        return dict(Counter(t.skipped for t in self.tried if t.skipped is not None))

    def summary(self) -> dict:
        """found / applied / skipped counts, reasons, every candidate, the choice (JSON-able)."""
        return {
            "kernel_class": self.kclass.key,
            "found": len(self.tried),
            "applied": self.applied,
            "skipped": len(self.tried) - self.applied,
            "skip_reasons": self.skip_reasons,
            "untuned_ms": self.untuned_ms,
            "transfer_ms": self.latency_ms,
            "speedup_vs_untuned": self.untuned_ms / self.latency_ms,
            "schedule": self.best.schedule.name if self.best is not None else None,
            "search_s": self.search_s,
            "candidates": [t.as_dict() for t in self.tried],
        }


def untuned_latency(mod: tvm.IRModule, bench: Bench) -> float:
    """The untuned default's latency (ms), timed as candidates are; CompileError if it fails."""
    try:
        return bench.screen(mod)
    except NotApplicable as e:
        raise CompileError(f"{bench.name}: the untuned kernel {e}") from None


def transfer_kernel(
    mod: tvm.IRModule,
    kclass: KernelClass,
    bench: Bench,
    candidates: Sequence[TunedSchedule],
    check_cancelled: Callable[[], None] = lambda: None,
    on_tried: Callable[[int, int], None] = lambda done, total: None,
    untuned_ms: float | None = None,
) -> KernelTransfer:
    """Try every candidate on `mod`; keep the fastest if it beats the untuned default
    (timed here unless `untuned_ms` gives it)."""
    untuned = untuned_latency(mod, bench) if untuned_ms is None else untuned_ms
    result = KernelTransfer(kclass, untuned)
    start = time.perf_counter()
    postprocs = postprocessors(mod, bench.place.target) if candidates else []
    best_ms = untuned
    for i, schedule in enumerate(candidates):
        check_cancelled()
        try:
            scheduled = apply_schedule(mod, schedule.trace, postprocs)
            tried = Tried(schedule, latency_ms=bench.screen(scheduled.mod))
        except NotApplicable as e:
            tried = Tried(schedule, skipped=str(e))
        result.tried.append(tried)
        if tried.latency_ms is not None and tried.latency_ms < best_ms:
            best_ms, result.best, result.best_schedule = tried.latency_ms, tried, scheduled
        on_tried(i + 1, len(candidates))
    result.search_s = time.perf_counter() - start
    return result
