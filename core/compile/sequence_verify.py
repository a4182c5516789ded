"""A transformation sequence's kernel compiled, run and timed on this machine against the
untransformed nest (core.codegen.loopnest_tvm builds both). `verify_sequence` takes and
returns JSON, for core.jobs.isolate.call_in_subprocess. Imports TVM."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import tvm
from tvm import te

from ..analysis.legality import check_sequence
from ..codegen.loopnest_tvm import DTYPE, build_expression, schedule
from ..ir.sequence import sequence_from_document
from .target import core_count, local_target, use_threads


def compile_module(mod) -> tvm.runtime.Executable:
    return tvm.compile(mod, target=local_target(core_count()))


def run(executable, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> np.ndarray:
    dev = tvm.cpu()
    out = tvm.runtime.empty(out_shape, DTYPE, dev)
    executable["main"](*(tvm.runtime.tensor(a, dev) for a in inputs), out)
    return out.numpy()


def random_inputs(args: list[te.Tensor], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(int(s) for s in t.shape)).astype(DTYPE) for t in args[:-1]]


def verify_sequence(
    document: dict, bindings: Mapping[str, int] | None = None, batch: int = 1, seed: int = 0, repeats: int = 0
) -> dict:
    """Compile the scheduled and the untransformed PrimFunc, run both on the same random
    input and weights and compare; with repeats > 0 also time both (median ms)."""
    use_threads(core_count())
    report = check_sequence(sequence_from_document(document), bindings)
    mod, sch, scheduled = schedule(report, batch)
    assert report.final is not None  # schedule() refuses a sequence that did not finish
    args, _ = build_expression(report.final, batch)
    inputs = random_inputs(args, seed)
    out_shape = tuple(int(s) for s in args[-1].shape)
    built = {"scheduled": compile_module(scheduled), "untransformed": compile_module(mod)}
    outputs = {k: run(ex, inputs, out_shape) for k, ex in built.items()}
    error = float(np.max(np.abs(outputs["scheduled"] - outputs["untransformed"])))
    result = {
        "max_abs_error": error,
        "scale": float(np.max(np.abs(outputs["untransformed"]))),
        "output_shape": list(out_shape),
        "trace": str(sch.trace),
        "prefetches": scheduled.script().count("llvm.prefetch"),  # calls inserted after the schedule
    }
    if repeats:
        dev = tvm.cpu()
        values = [tvm.runtime.tensor(a, dev) for a in inputs] + [tvm.runtime.empty(out_shape, DTYPE, dev)]
        for k, ex in built.items():
            timer = ex.mod.time_evaluator("main", dev, number=1, repeat=repeats, min_repeat_ms=20)
            result[f"{k}_ms"] = float(timer(*values).median * 1e3)
    return result
