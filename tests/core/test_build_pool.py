"""Tuning builds its candidates in processes started once per run (core.compile.build_pool),
not once per batch: a network's kernels tune in small batches, and starting processes was most
of their time. A build that fails is reported as failed, and the next build still works."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
import tvm
from tvm import te, tirx
from tvm.s_tir import meta_schedule as ms

from core.compile.build_pool import pooled_builder
from core.compile.target import local_target
from core.compile.tune import tune_kernels

pytestmark = pytest.mark.tvm


def _kernel(n: int) -> tvm.IRModule:
    """A small matrix product: enough schedules to tune."""
    a, b = te.placeholder((n, n), name="a"), te.placeholder((n, n), name="b")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="c")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c]).with_attr("global_symbol", "main")})


def _unbuildable() -> tvm.IRModule:
    """Reads a variable it is never given: TVM refuses to build it."""
    undefined, out = tirx.Var("n", "int32"), tirx.decl_buffer((4,), "float32", name="out")
    body = tirx.BufferStore(out, tirx.Cast("float32", undefined), [0])
    return tvm.IRModule({"main": tirx.PrimFunc([out], body).with_attr("global_symbol", "main")})


def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def test_one_set_of_processes_builds_every_batch_and_survives_a_failed_build():
    target = local_target(1)
    before = _children()
    with pooled_builder() as builder:
        first = builder.build([ms.builder.BuilderInput(_kernel(n), target) for n in (4, 5)])
        started = _children() - before
        [failed] = builder.build([ms.builder.BuilderInput(_unbuildable(), target)])
        again = builder.build([ms.builder.BuilderInput(_kernel(n), target) for n in (6, 7)])
        still = _children() - before
    assert all(r.error_msg is None and Path(r.artifact_path).is_file() for r in first + again)
    assert failed.artifact_path is None and failed.error_msg.startswith("build failed: ")
    assert "are used, but are not passed in as API arguments" in failed.error_msg
    assert started and len(started & still) >= len(started) - 1  # at most the failed build's process replaced
    assert not (_children() - before) & (started | still)  # stopped when the run ends


@pytest.mark.slow
def test_a_networks_tuning_counts_each_trial_as_it_is_measured(tmp_path):
    """MetaSchedule sends every kernel a batch before it counts any batch as measured; its
    trials count one by one as the runner measures them, not a batch at a time."""
    kernels = [(f"k{n}", _kernel(n), 1) for n in (8, 9, 10)]
    seen: list[tuple[float, str]] = []
    ran = tune_kernels(
        kernels, local_target(1), tmp_path, 6, cost_model="random", on_progress=lambda d, t, w: seen.append((d, w))
    )
    assert ran == 6
    measured = [done for done, what in seen if "trials measured" in what]
    assert measured[:6] == [1, 2, 3, 4, 5, 6]  # three batches of two, each trial as it was measured
    shown = [done for done, _ in seen]
    assert shown == sorted(shown) and seen[-1][0] == 6  # never back
