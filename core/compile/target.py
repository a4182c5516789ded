"""The local CPU as a TVM target, and the thread counts TVM and torch are timed on.

TVM's runtime reads TVM_NUM_THREADS when its thread pool starts (without it, it
used a single thread on this kind of machine), so `use_threads` runs before the
first kernel in a worker process; torch gets the same count. While timing, every
side may use as many threads as are free and runs on the faster count of those
(`fastest_threads`): the same allowance for both, each side at its best."""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path

import torch
import tvm

from .rounds import CHOICE_ROUND, Timer, interleave, thread_counts
from .rounds import core_count as core_count  # defined where torch-free code (remeasure) can import it


def use_threads(count: int) -> None:
    os.environ["TVM_NUM_THREADS"] = str(count)
    torch.set_num_threads(count)


@contextlib.contextmanager
def timing_threads(count: int) -> Iterator[int]:
    """TVM's runtime and torch both on `count` threads while timing, the counts before restored
    afterwards (TVM resizes its pool in place: runtime.config_threadpool)."""
    resize, now = tvm.get_global_func("runtime.config_threadpool"), tvm.get_global_func("runtime.NumThreads")
    before = (int(now()), torch.get_num_threads())
    resize(0, count)
    torch.set_num_threads(count)
    try:
        yield count
    finally:
        resize(0, before[0])
        torch.set_num_threads(before[1])


def at_threads(timer: Timer, count: int) -> Timer:
    """`timer` with TVM's pool and torch on `count` threads while it runs (set before each call
    where they differ: the sides of one round may run on different counts)."""
    resize, now = tvm.get_global_func("runtime.config_threadpool"), tvm.get_global_func("runtime.NumThreads")

    def timed(number: int) -> float:
        if int(now()) != count:
            resize(0, count)
        if torch.get_num_threads() != count:
            torch.set_num_threads(count)
        return timer(number)

    return timed


def fastest_threads(timer: Timer, free: int, min_repeat_ms: float) -> int:
    """The side's faster thread count of core.compile.rounds.thread_counts(free): the counts
    timed in interleaved rounds of their own (CHOICE_ROUND of min_repeat_ms each, the fewest
    rounds that give the median an interval), the least median kept. Both sides of a speedup
    choose so: neither is held to a count that slows it, and on a busy machine (one free core)
    there is no choice."""
    counts = thread_counts(free)
    if len(counts) == 1:
        return counts[0]
    rounds = interleave(
        {str(k): at_threads(timer, k) for k in counts}, CHOICE_ROUND * min_repeat_ms, precision=math.inf
    )
    return int(rounds.fastest())


def local_target(cores: int) -> tvm.target.Target:
    return tvm.target.Target({"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu(), "num-cores": cores})


def peak_gflops(cores: int, cpuinfo: str | None = None) -> tuple[float | None, str]:
    """The cores' peak FP32 rate from the CPU's features: cores x clock x FLOPs per cycle (vector
    lanes x 2 per FMA x two FMA pipes); (None, why) when /proc/cpuinfo does not tell the clock.
    A ceiling no kernel can pass, unlike a measured matmul rate."""
    info = cpuinfo if cpuinfo is not None else _read("/proc/cpuinfo")
    flags_line = re.search(r"^flags\s*:(.*)$", info, re.M)
    flags = set(flags_line.group(1).split()) if flags_line else set()
    mhz = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", info, re.M)]
    if not mhz:
        return None, "peak unknown: the CPU's clock is not in /proc/cpuinfo"
    lanes, isa = (16, "AVX-512") if "avx512f" in flags else (8, "AVX2") if "avx2" in flags else (4, "SSE")
    fma = 2 if "fma" in flags else 1
    per_cycle = lanes * fma * 2
    peak = cores * max(mhz) / 1e3 * per_cycle
    return peak, (
        f"{cores} cores x {max(mhz) / 1e3:.2f} GHz x {per_cycle} FP32 FLOP/cycle ({isa}"
        f"{', FMA' if fma == 2 else ''}, two pipes) = {peak:.0f} GFLOP/s"
    )


def _read(path: str) -> str:
    return Path(path).read_text() if Path(path).exists() else ""
