"""Timing whole networks: TVM's builds of relax modules (checked against torch first) and
torch's eager modules, all in the same paired, interleaved rounds of at least `min_repeat_ms`
each (core.compile.rounds), and how long each of the operator's kernels takes inside the
network. All run on as many threads as are free while timed (a thread pool larger than that
waits at every kernel for a thread the scheduler has not run: a 10 ms network read 196 ms at
load 6 on 2 cores). Timed one after the other, eager PyTorch read 117 and 333 ms for the same
network at load 7; within a round, load falls on every side alike."""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping

import torch
import tvm
from torch import nn
from tvm import relax

from ..compile.rounds import Rounds, interleave
from ..compile.timing import check_close, kernel_timer, torch_timer


def vm_of(executable) -> relax.VirtualMachine:
    return relax.VirtualMachine(executable, tvm.cpu())


def check_network(vm: relax.VirtualMachine, model: nn.Module, example: torch.Tensor, what: str) -> float:
    """TVM's output against torch's on `example` (NumericalMismatch beyond float32 noise)."""
    with torch.no_grad():
        reference = model.eval()(example).numpy()
    return check_close(vm["main"](tvm.runtime.tensor(example.numpy())).numpy(), reference, what)


def eager(name: str) -> str:
    """The name of a network's eager PyTorch side in the rounds."""
    return f"PyTorch {name}"


def paired_rounds(
    vms: Mapping[str, relax.VirtualMachine],
    models: Mapping[str, nn.Module],
    example: torch.Tensor,
    repeat: int,
    min_repeat_ms: float,
    reference: str,
) -> Rounds:
    """The TVM networks and the eager torch ones (`models`, as `eager(name)`) timed in
    interleaved rounds (core.compile.rounds: each once per round for at least min_repeat_ms,
    the order reversed every other round, at least `repeat` rounds and more until the TVM
    candidate's speedup over `reference` is precise): load that comes and goes while they are
    timed (the discovery loop's other worker training) falls on all alike, so a per-round ratio
    compares like with like even when the absolute times are in doubt."""
    x = tvm.runtime.tensor(example.numpy())
    timers = {name: kernel_timer(vm, tvm.cpu(), [x]) for name, vm in vms.items()}
    timers.update({eager(name): torch_timer(model.eval(), example) for name, model in models.items()})
    judged = [name for name in vms if name != reference]
    return interleave(timers, min_repeat_ms, reference=reference, min_rounds=repeat, judged=judged)


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
