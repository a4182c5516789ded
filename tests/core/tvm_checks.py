"""Running an operator through TVM and through its torch module on the same input, for the
codegen tests."""

from __future__ import annotations

import re
from math import prod

import numpy as np
import torch
import tvm
from tvm import s_tir, tirx

from core.codegen import build_module
from core.codegen.to_tvm import lower
from core.ir.graph import OperatorGraph


def run_both(graph: OperatorGraph, bindings=None, batch: int = 2) -> tuple[np.ndarray, np.ndarray, str]:
    """(TVM output, torch output, TVMScript) on one random input with the module's own weights."""
    lowered = lower(graph, bindings, batch)
    executable = tvm.compile(lowered.module(), target="llvm")
    torch.manual_seed(0)
    module = build_module(graph, bindings)
    x = torch.randn(lowered.input_shape)
    with torch.no_grad():
        want = module(x).numpy()
    params = dict(module.named_parameters())
    dev = tvm.cpu()
    args = [
        tvm.runtime.tensor(x.numpy(), dev),
        *(tvm.runtime.tensor(params[w.name].detach().numpy(), dev) for w in lowered.weights),
        tvm.runtime.empty(lowered.output_shape, "float32", dev),
    ]
    executable["main"](*args)
    return args[-1].numpy(), want, lowered.module().script()


def blocks(script: str) -> list[str]:
    return [b for b in re.findall(r'T\.sblock\("([^"]+)"\)', script) if b != "root"]


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def kernel_flops(lowered) -> int:
    """The work of the stages TVM was given, counted off the PrimFunc's blocks by the cost
    model's conventions: a block that sums (or takes a max) over reduction axes 2 FLOPs per
    term when it reads a weight, else 1; a block without reduction axes 1 per element when it
    computes something, none when it only moves data (a copy, a padding, a roll, a concat)."""
    weights = {w.name for w in lowered.weights}
    sch = s_tir.Schedule(lowered.module())
    total = 0
    for handle in sch.get_child_blocks(sch.get_sblock("root")):
        block = sch.get(handle)
        points = prod(int(iv.dom.extent) for iv in block.iter_vars)
        weighted = any(r.source.name in weights for r in block.reads)
        if any(int(iv.iter_type) == _REDUCTION for iv in block.iter_vars):
            total += points * (2 if weighted else 1)
        elif weighted or not _moves_data(block.body.value):
            total += points
    return total


_REDUCTION = 2  # IterVar.CommReduce


def _moves_data(e) -> bool:
    """True when the value is read, not computed: loads, constants, a choice between them
    (if_then_else, select) and a padding's mask (a load times select(inside, 1, 0))."""
    if isinstance(e, (tirx.FloatImm, tirx.IntImm, tvm.ir.TensorLoad)):
        return True
    if isinstance(e, tirx.Select):
        return _moves_data(e.true_value) and _moves_data(e.false_value)
    if isinstance(e, tvm.ir.Call) and e.op.name.endswith(".if_then_else"):
        return _moves_data(e.args[1]) and _moves_data(e.args[2])
    if isinstance(e, tirx.Mul) and isinstance(e.b, tirx.Select):
        return _moves_data(e.a) and all(isinstance(v, tirx.FloatImm) for v in (e.b.true_value, e.b.false_value))
    return False
