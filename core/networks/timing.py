"""Timing whole networks: TVM's builds of relax modules (checked against torch first), in
alternating rounds of at least `min_repeat_ms` each, and torch's eager module the way single
kernels are timed (core.compile.timing: warm-up, then `repeat` repeats, median and spread),
and how long each of the operator's kernels takes inside the network.

Torch is timed before TVM runs anything: TVM's worker threads keep spinning for a while
after each run and would take the cores torch's own threads need."""

from __future__ import annotations

import os
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping

import torch
import tvm
from torch import nn
from tvm import relax

from ..compile.timing import Timing, check_close, time_torch


def torch_timing(model: nn.Module, example: torch.Tensor, repeat: int, min_repeat_ms: float) -> Timing:
    """The eager torch module's latency on `example` (in eval mode, inference only)."""
    return time_torch(model.eval(), example, repeat, min_repeat_ms)


def busy_machine(load: float) -> str:
    """Why a whole network's timing is in doubt on a busy machine ("" when it is not): TVM's
    runtime threads wait for each other at every kernel, so other processes on the cores
    slow a network far more than one kernel (a 10 ms network read 196 ms at load 6 on 2 cores)."""
    cores = os.cpu_count() or 1
    return f"the machine was busy while timing (load {load:.1f} on {cores} cores)" if load > cores else ""


def vm_of(executable) -> relax.VirtualMachine:
    return relax.VirtualMachine(executable, tvm.cpu())


def check_network(vm: relax.VirtualMachine, model: nn.Module, example: torch.Tensor, what: str) -> float:
    """TVM's output against torch's on `example` (NumericalMismatch beyond float32 noise)."""
    with torch.no_grad():
        reference = model.eval()(example).numpy()
    return check_close(vm["main"](tvm.runtime.tensor(example.numpy())).numpy(), reference, what)


def alternating_timings(
    vms: Mapping[str, relax.VirtualMachine], example: torch.Tensor, repeat: int, min_repeat_ms: float
) -> dict[str, Timing]:
    """Each network timed in `repeat` rounds, every network once per round (for at least
    min_repeat_ms) and the order reversed every other round: load that comes and goes while
    they are timed (the discovery loop's other worker training) falls on both alike, so
    their ratio compares like with like even when the absolute times are in doubt."""
    x = tvm.runtime.tensor(example.numpy())
    timers = {
        name: vm.time_evaluator("main", tvm.cpu(), number=1, repeat=1, min_repeat_ms=int(min_repeat_ms))
        for name, vm in vms.items()
    }
    runs: dict[str, list[float]] = {name: [] for name in timers}
    for round_ in range(repeat):
        for name in list(timers)[:: 1 if round_ % 2 == 0 else -1]:
            runs[name] += timers[name](x).results
    return {name: Timing.of(r) for name, r in runs.items()}


def kernel_times(vm: relax.VirtualMachine, example: torch.Tensor, names: Iterable[str], runs: int = 20) -> dict:
    """Milliseconds one call of each named kernel (a PrimFunc of the module) takes inside the
    network: the median over `runs` passes of its calls' mean wall time as the VM sees them,
    less the cost of watching a call (the fastest of the VM's own builtins, about a
    microsecond). Per call, so it compares with the kernel timed alone even where the network
    calls it several times (a kernel class shared by several layers of one size)."""
    wanted = set(names)
    started: dict[str, float] = {}
    calls: dict[str, list[float]] = defaultdict(list)

    def instrument(func, symbol, before, ret, *args):
        if before:
            started[symbol] = time.perf_counter()
        else:
            calls[symbol].append(time.perf_counter() - started[symbol])
        return 0  # VMInstrumentReturnKind.NO_OP: carry on

    x = tvm.runtime.tensor(example.numpy())
    vm["main"](x)  # warm
    vm.set_instrument(instrument)
    per_run: dict[str, list[float]] = defaultdict(list)
    try:
        for _ in range(runs):
            calls.clear()
            vm["main"](x)
            for symbol, spent in calls.items():
                per_run[symbol].append(sum(spent) / len(spent))
    finally:
        vm.set_instrument(None)
    builtins = [statistics.median(v) for symbol, v in per_run.items() if symbol.startswith("vm.builtin")]
    overhead = min(builtins, default=0.0)
    return {name: max(statistics.median(per_run[name]) - overhead, 0.0) * 1e3 for name in wanted if name in per_run}
