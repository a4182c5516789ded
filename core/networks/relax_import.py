"""torch network -> relax module: torch.export, then TVM's importer with the two ops it
lacks: aten.unfold, and `tessera::kernel` (core.networks.kernel_layers), which becomes a call
of the operator's own PrimFunc."""

from __future__ import annotations

import warnings

import torch
import tvm
from torch import nn
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program

from ..compile.errors import CompileError
from .kernel_layers import kernel

OPAQUE = 8  # relax's op pattern kOpaque: relax fuses no other op into the operator's kernel


def _unfold(node, importer):
    """aten.unfold(x, dim, size, step) (windows as a new last axis): `size` strided slices
    stacked, out[..., i, ..., k] = x[..., i*step + k, ...]."""
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


def _operator_kernel(node, importer):
    """tessera::kernel(x, weights, name): a call of the named kernel's PrimFunc, added to the
    module once (as an opaque function: its stages are scheduled as one kernel)."""
    args = [importer.env[node.args[0]], *(importer.env[w] for w in node.args[1])]
    chosen = kernel(node.args[2])
    builder = importer.block_builder
    existing = [gv for gv in builder.get().get_global_vars() if gv.name_hint == chosen.name]
    func = chosen.lowered.func.with_attr("global_symbol", chosen.name).with_attr("op_pattern", OPAQUE)
    gv = existing[0] if existing else builder.add_func(func, chosen.name)
    return builder.emit(relax.call_tir(gv, args, relax.TensorType(chosen.lowered.output_shape, "float32")))


CONVERTERS = {"unfold.default": _unfold, "kernel.default": _operator_kernel}


def to_relax(model: nn.Module, example: torch.Tensor, what: str) -> tvm.IRModule:
    """`model` (in eval mode) traced on `example` into relax; CompileError naming `what` if torch or TVM refuse."""
    model.eval()
    try:
        with warnings.catch_warnings():  # torch.export's own deprecation notice, once per network
            warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
            program = torch.export.export(model, (example,))
            return from_exported_program(program, custom_convert_map=CONVERTERS, unwrap_unit_return_tuple=True)
    except Exception as e:  # torch.export and TVM raise many types; the message says what failed
        raise CompileError(f"{what}: TVM could not import the network: {type(e).__name__}: {e}") from None
