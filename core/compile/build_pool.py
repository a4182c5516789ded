"""A MetaSchedule builder whose worker processes live for a whole tuning run.

TVM's LocalBuilder starts a fresh process pool for every batch of candidates, and each new
process imports TVM and its tensor intrinsics (core.compile.warm): about 7 s on this machine
before the first build. A network's tuning measures a few candidates per kernel per batch, so
that start-up was most of its time (two trials per kernel for the 16 kernels of a small VGG:
~8 s per batch, ~1 s of it building). Here the processes are started once and each is
replaced after a number of builds (TVM restarts its pool because its workers leak memory
over many builds); a build that times out or crashes kills its process, which the pool
starts again for the next build."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.support.popen_pool import PopenPoolExecutor, StatusKind

from .warm import warm_tensor_intrin

BUILDS_PER_PROCESS = 64  # then the process is replaced (memory); a new one costs ~7 s
BUILD_TIMEOUT_S = 120


@contextmanager
def pooled_builder() -> Iterator[ms.builder.Builder]:
    """A builder for one tuning run; its processes are stopped when the run ends, however it ends."""
    builder = _PooledBuilder()
    try:
        yield builder
    finally:
        builder.pool.shutdown(wait=False)


@derived_object
class _PooledBuilder(ms.builder.PyBuilder):
    def __init__(self):
        super().__init__()
        self.pool = PopenPoolExecutor(
            max_workers=os.cpu_count(),
            timeout=BUILD_TIMEOUT_S,
            initializer=warm_tensor_intrin,
            maximum_process_uses=BUILDS_PER_PROCESS,
        )

    def build(self, build_inputs: list[ms.builder.BuilderInput]) -> list[ms.builder.BuilderResult]:
        work = [(one.mod, one.target) for one in build_inputs]
        return [_result(outcome) for outcome in self.pool.map_with_error_catching(_build_and_export, work)]


def _result(outcome) -> ms.builder.BuilderResult:
    if outcome.status == StatusKind.COMPLETE:
        return ms.builder.BuilderResult(outcome.value, None)
    if outcome.status == StatusKind.TIMEOUT:
        return ms.builder.BuilderResult(None, f"build timed out after {BUILD_TIMEOUT_S} s (its process was killed)")
    return ms.builder.BuilderResult(None, f"build failed: {outcome.value}")


def _build_and_export(work) -> str:
    """In a pool process: build one candidate and export it as MetaSchedule's runners expect."""
    from tvm.s_tir.meta_schedule.builder.local_builder import default_build, default_export

    mod, target = work
    return default_export(default_build(mod, target, None))
