"""The local CPU as a TVM target, and the one thread count TVM and torch share.

TVM's runtime reads TVM_NUM_THREADS when its thread pool starts (without it, it
used a single thread on this kind of machine), so `use_threads` runs before the
first kernel in a worker process; torch gets the same count so that their
timings compare like with like."""

from __future__ import annotations

import os

import torch
import tvm


def core_count() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def use_threads(count: int) -> None:
    os.environ["TVM_NUM_THREADS"] = str(count)
    torch.set_num_threads(count)


def local_target(cores: int) -> tvm.target.Target:
    return tvm.target.Target({"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu(), "num-cores": cores})
