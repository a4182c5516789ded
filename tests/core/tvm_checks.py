"""Running an operator through TVM and through its torch module on the same input, for the
codegen tests."""

from __future__ import annotations

import re

import numpy as np
import torch
import tvm

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
