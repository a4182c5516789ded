"""The kernel algorithms a measurement can use, without importing TVM: TVM's own lowering of
the operator ("default") and the grouped spatial pack for grouped convolutions ("gspc",
core.compile.gspc), with the check that an operator is one gspc can run."""

from __future__ import annotations

from ..codegen.conv_spec import ConvMatch, NotAConvolution, match_conv
from ..ir.graph import OperatorGraph
from .errors import CompileError

ALGORITHMS = ("default", "gspc")


def gspc_convolution(graph: OperatorGraph, bindings: dict[str, int]) -> ConvMatch:
    """The operator read as the grouped convolution algorithm 'gspc' runs, or a CompileError
    naming the node that makes it something else."""
    try:
        return match_conv(graph, bindings)
    except NotAConvolution as e:
        raise CompileError(f"algorithm 'gspc' runs grouped convolutions only: {e}") from None
