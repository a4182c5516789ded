"""The torch module of a sequence's result: the IR's own lowering (core.codegen.to_torch)
of each part's graph, the parts' outputs concatenated along channels.

Imports torch: use it in worker processes, tests and benchmarks."""
from __future__ import annotations

from typing import Mapping

import torch
from torch import nn

from .loopnest_ir import SequenceOperator
from .to_torch import build_module


class ConcatParts(nn.Module):
    """Output channels of a peeled nest: part 0's, then part 1's, ..."""

    def __init__(self, parts: list[nn.Module]):
        super().__init__()
        self.parts = nn.ModuleList(parts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([p(x) for p in self.parts], dim=1)


def operator_module(op: SequenceOperator, bindings: Mapping[str, int] | None = None) -> nn.Module:
    """forward maps [N, C_in, H, W] to [N, C_out, H, W] (dense: [N, C_in] to [N, C_out])."""
    values = {**op.bindings, **(bindings or {})}
    modules = [build_module(g, values) for g in op.graphs]
    return modules[0] if len(modules) == 1 else ConcatParts(modules)
