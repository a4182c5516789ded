"""One operator at its sizes, made ready once for every kernel built from it: TVM's lowering,
its torch module with seeded (kaiming) weights, a seeded random input, and the module's
output on that input, which every kernel's output must match before its timing counts.
Kernels are fed the module's own weights, so all of them compute the same thing. Imports
TVM and torch: worker processes only."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..analysis.summary import summarize
from ..codegen import build_module
from ..codegen.to_tvm import Lowered, lower
from ..ir.graph import OperatorGraph
from .errors import CompileError


@dataclass(frozen=True)
class Workload:
    graph: OperatorGraph
    lowered: Lowered  # TVM's default lowering, and the shapes and weights every kernel takes
    module: torch.nn.Module
    x: torch.Tensor  # the input
    reference: np.ndarray  # the module's output on x

    @classmethod
    def prepare(cls, graph: OperatorGraph, bindings: dict[str, int] | None, batch: int, seed: int) -> Workload:
        lowered = lower(graph, bindings, batch)
        torch.manual_seed(seed)
        module = build_module(graph, bindings).eval()
        x = torch.randn(lowered.input_shape)
        with torch.inference_mode():
            reference = module(x).numpy()
        return cls(graph, lowered, module, x, reference)

    @property
    def name(self) -> str:
        return self.graph.name or "operator"

    @property
    def bindings(self) -> dict[str, int]:
        """Every size the operator was built at (its own bindings and the request's)."""
        return dict(self.lowered.plan.bindings)

    @property
    def batch(self) -> int:
        return self.lowered.batch

    def weight(self, name: str) -> np.ndarray:
        """The torch module's weight `name` (as kernels are fed it)."""
        return dict(self.module.named_parameters())[name].detach().numpy()

    def cost(self) -> tuple[float, float]:
        """(FLOPs of one run at this batch, parameters)."""
        cost = summarize(self.graph, self.bindings).numeric_cost
        if cost is None:  # it was lowered at these sizes, so they are all bound
            raise CompileError(f"{self.name}: no cost at {self.bindings}")
        return cost["flops"] * self.batch, cost["params"]
