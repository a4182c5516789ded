"""The torch module of a sequence's result: the IR's own lowering (core.codegen.to_torch)
of its operator graph (a peeled nest's parts joined by concat).

Imports torch: use it in worker processes, tests and benchmarks."""

from __future__ import annotations

from collections.abc import Mapping

from torch import nn

from .loopnest_ir import SequenceOperator
from .to_torch import build_module


def operator_module(op: SequenceOperator, bindings: Mapping[str, int] | None = None) -> nn.Module:
    """forward maps [N, C_in, H, W] to [N, C_out, H, W] (dense: [N, C_in] to [N, C_out])."""
    return build_module(op.graph, {**op.bindings, **(bindings or {})})
