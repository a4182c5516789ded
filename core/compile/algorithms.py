"""The kernel algorithms a measurement can use, in one registry that imports no TVM (the
window and the CLI read it to offer and check algorithms; workers build the kernels).

An algorithm is a Kernel (core.compile.kernels.protocol: its module, its arguments, how it is
tuned, what the result says about it) in a module of core.compile.kernels, named here by its
'module:Class' path, which only a worker imports. Adding one is that module and one line in
ALGORITHMS; `check` refuses an operator the algorithm cannot run, before anything is built."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..codegen.conv_spec import ConvMatch, NotAConvolution, match_conv
from ..ir.graph import OperatorGraph
from .errors import CompileError


def any_operator(graph: OperatorGraph, bindings: Mapping[str, int]) -> None:
    """Every operator that can be lowered: nothing to refuse."""


def gspc_convolution(graph: OperatorGraph, bindings: Mapping[str, int]) -> ConvMatch:
    """The operator read as the grouped convolution algorithm 'gspc' runs, or a CompileError
    naming the node that makes it something else."""
    try:
        return match_conv(graph, bindings)
    except NotAConvolution as e:
        raise CompileError(f"algorithm 'gspc' runs grouped convolutions only: {e}") from None


@dataclass(frozen=True)
class Algorithm:
    name: str
    kernel: str  # 'module:Class' of its core.compile.kernels.protocol.Kernel (imports TVM)
    description: str  # one line for --help
    #: check(graph, bindings) raises a CompileError naming the node when the algorithm cannot
    #: run the operator (the graph's own node names, so the message points at the user's nodes)
    check: Callable[[OperatorGraph, Mapping[str, int]], object] = any_operator
    tiles: bool = False  # takes the request's (T_O, T_I) tile sizes


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm("default", "core.compile.kernels.default:DefaultKernel", "TVM's own lowering of the operator"),
        Algorithm(
            "gspc",
            "core.compile.kernels.gspc:GspcKernel",
            "grouped spatial pack convolution (grouped convolutions only)",
            check=gspc_convolution,
            tiles=True,
        ),
    )
}


def algorithm(name: str) -> Algorithm:
    """The registered algorithm `name`, or a CompileError listing those there are."""
    if name not in ALGORITHMS:
        raise CompileError(f"unknown algorithm {name!r} (use {' or '.join(ALGORITHMS)})")
    return ALGORITHMS[name]


def algorithms_for(graph: OperatorGraph, bindings: Mapping[str, int]) -> tuple[list[str], list[str]]:
    """(the algorithms that can run the operator, why each of the others cannot)."""
    runs, refused = [], []
    for a in ALGORITHMS.values():
        try:
            a.check(graph, bindings)
            runs.append(a.name)
        except CompileError as e:
            refused.append(str(e))
    return runs, refused
