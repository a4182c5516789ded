"""Checks of generated torch modules that several test modules make."""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from core.codegen import build_module, module_source


def same_as_primitives(graph, bindings=None, x_shape=None, batch=3):
    """The module with layers and the one without, same weights: equal outputs and gradients."""
    torch.manual_seed(0)
    fast, slow = build_module(graph, bindings), build_module(graph, bindings, layers=False)
    with torch.no_grad():
        for p in fast.parameters():
            p.normal_()
    slow.load_state_dict(fast.state_dict())
    shape = x_shape or (batch, *[graph.bindings.get(v, 0) for v in ("C_in", "H", "W")])
    x = torch.randn(shape, requires_grad=True)
    y_fast, y_slow = fast(x), slow(x)
    torch.testing.assert_close(y_fast, y_slow, atol=1e-4, rtol=1e-4)
    grad = torch.randn_like(y_fast)
    (gx_fast, *gw_fast) = torch.autograd.grad(y_fast, [x, *fast.parameters()], grad)
    (gx_slow, *gw_slow) = torch.autograd.grad(y_slow, [x, *slow.parameters()], grad)
    torch.testing.assert_close(gx_fast, gx_slow, atol=1e-3, rtol=1e-4)
    for a, b in zip(gw_fast, gw_slow):
        torch.testing.assert_close(a, b, atol=1e-3, rtol=1e-4)
    return module_source(graph, bindings)


class _Largest(TorchFunctionMode):
    """The most elements any torch function called in the block returned."""

    def __init__(self):
        super().__init__()
        self.numel = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor):
            self.numel = max(self.numel, out.numel())
        return out


def largest_value(module: torch.nn.Module, x: torch.Tensor) -> int:
    """The most elements of any tensor a torch function returns in the module's forward pass
    (views included: an expanded broadcast counts at its full size)."""
    with _Largest() as seen:
        module(x)
    return seen.numel
