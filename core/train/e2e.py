"""End-to-end latency: the whole backbone, original and with the operator, compiled by TVM
relax from torch.export and timed on this CPU in the same process, one after the other.

Measured like single kernels (core.compile): TVM's output checked against torch's before
any timing counts, then `repeat` timed repeats of at least `min_repeat_ms` each, median and
standard deviation. Imports TVM: worker processes only.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import torch
import tvm
from torch import nn
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program

from core.compile.measure import Timing, check_close

from .errors import EvaluationError


@dataclass(frozen=True)
class NetworkTiming:
    latency: Timing
    compile_s: float


def _unfold(node, importer):
    """aten.unfold(x, dim, size, step) (windows as a new last axis), which the relax frontend
    lacks: `size` strided slices stacked, out[..., i, ..., k] = x[..., i*step + k, ...]."""
    x = importer.env[node.args[0]]
    dim, size, step = node.args[1], node.args[2], node.args[3]
    shape = [int(s) for s in importer.shape_of(x)]
    dim %= len(shape)
    count = (shape[dim] - size) // step + 1
    windows = [
        relax.op.strided_slice(x, axes=[dim], begin=[k], end=[k + (count - 1) * step + 1], strides=[step])
        for k in range(size)
    ]
    return importer.block_builder.emit(relax.op.stack(windows, axis=len(shape)))


CONVERTERS = {"unfold.default": _unfold}


def compile_network(model: nn.Module, example: torch.Tensor, target) -> relax.VirtualMachine:
    """torch.export -> relax -> tvm.compile; the returned VM's 'main' takes the input tensor."""
    model.eval()
    try:
        with warnings.catch_warnings():  # torch.export's own deprecation notice, once per network
            warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
            program = torch.export.export(model, (example,))
            mod = from_exported_program(program, custom_convert_map=CONVERTERS, unwrap_unit_return_tuple=True)
        return relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    except Exception as e:  # torch.export and TVM raise many types; the job reports the message
        raise EvaluationError(f"TVM could not compile the network: {type(e).__name__}: {e}") from None


def time_network(
    model: nn.Module, example: torch.Tensor, target, name: str, repeat: int = 10, min_repeat_ms: float = 100.0
) -> NetworkTiming:
    """Compile, check TVM's output against torch's on `example`, then time TVM's VM."""
    start = time.perf_counter()
    vm = compile_network(model, example, target)
    compile_s = time.perf_counter() - start
    x = tvm.runtime.tensor(example.numpy())
    with torch.no_grad():
        check_close(vm["main"](x).numpy(), model(example).numpy(), name)
    timer = vm.time_evaluator("main", tvm.cpu(), number=1, repeat=repeat, min_repeat_ms=int(min_repeat_ms))
    return NetworkTiming(Timing.of(timer(x).results), compile_s)
