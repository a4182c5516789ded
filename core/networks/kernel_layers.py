"""The operator's layers of a candidate network as TVM kernels of Tessera's own lowering.

Left to relax, an operator's torch module would be imported op by op (unfold, einsum, ...)
and become kernels unlike the one Tessera measures and tunes. Instead each replaced layer
calls `tessera::kernel`, a torch custom op that torch.export keeps whole and that the relax
import (core.networks.relax_import) turns into a call of the operator's PrimFunc
(core.codegen.to_tvm) at that layer's sizes: the kernel timed and tuned on its own is the
kernel the network runs, and its tuned schedules apply to it."""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch
from torch import nn

from ..codegen.to_tvm import Lowered, lower
from ..data.assignment import Assignment, as_assignment
from ..data.conv_fit import layer_bindings
from ..data.swap_convs import ReplacedConv, ReplacementReport
from ..ir.graph import OperatorGraph
from ..ir.serialize import content_hash


@dataclass(frozen=True)
class Kernel:
    """One operator layer's kernel: its name in relax, its lowering and the torch module it replaces."""

    name: str
    lowered: Lowered
    module: nn.Module


_KERNELS: dict[str, Kernel] = {}  # by name: what the custom op runs and what the relax import inserts


@torch.library.custom_op("tessera::kernel", mutates_args=())
def _kernel(x: torch.Tensor, weights: list[torch.Tensor], name: str) -> torch.Tensor:
    """In torch: the operator's module run with these weights (a concatenated layer's parts
    share one kernel and differ in weights)."""
    kernel = _KERNELS[name]
    names = [w.name for w in kernel.lowered.weights]
    return torch.func.functional_call(kernel.module, dict(zip(names, weights)), (x,))


@_kernel.register_fake
def _kernel_shape(x: torch.Tensor, weights: list[torch.Tensor], name: str) -> torch.Tensor:
    return x.new_empty((x.shape[0], *_KERNELS[name].lowered.plan.output_shape))


def kernel(name: str) -> Kernel:
    return _KERNELS[name]


class KernelLayer(nn.Module):
    """A part of a replaced layer (the operator at one layer's sizes) as one `tessera::kernel` call
    with the module's weights, in the PrimFunc's argument order."""

    def __init__(self, kernel: Kernel):
        super().__init__()
        self.module, self.name = kernel.module, kernel.name
        self.weight_names = [w.name for w in kernel.lowered.weights]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        params = dict(self.module.named_parameters())
        return torch.ops.tessera.kernel(x, [params[n] for n in self.weight_names], self.name)


def use_kernels(
    model: nn.Module, stand_in: OperatorGraph | Assignment, report: ReplacementReport, batch: int = 1
) -> list[Kernel]:
    """Make every replaced layer of `model` (core.data.swap_convs, with `stand_in`) call its
    operator's kernel; the distinct kernels, one per operator and set of layer sizes, lowered
    for inputs of `batch` examples."""
    plan = as_assignment(stand_in, [layer.name for layer in report.layers])
    made: dict[str, Kernel] = {}
    for layer in report.layers:
        graph = plan.operator_at(layer.name)
        if not layer.replaced or graph is None:
            continue
        replaced = model.get_submodule(layer.name)
        assert isinstance(replaced, ReplacedConv)
        bindings = layer_bindings(graph, layer.shape)
        name = f"tessera_{content_hash(graph)[:8]}_{_identifier(bindings)}"
        if name not in made:
            made[name] = Kernel(name, lower(graph, bindings, batch), replaced.parts[0])
            _KERNELS[name] = made[name]
        replaced.parts = nn.ModuleList(KernelLayer(Kernel(name, made[name].lowered, part)) for part in replaced.parts)
    return list(made.values())


def _identifier(bindings: dict[str, int]) -> str:
    return re.sub(r"\W", "_", "_".join(f"{k}{v}" for k, v in sorted(bindings.items())))
