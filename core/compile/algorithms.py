"""The kernel algorithms a measurement can use, in one registry that imports no TVM (the
window and the CLI read it to offer and check algorithms; workers build the kernels).

An algorithm is a Kernel (core.compile.kernels.protocol: its module, its arguments, how it is
tuned, what the result says about it) in a module of core.compile.kernels, named here by its
'module:Class' path, which only a worker imports. Adding one is that module and one line in
ALGORITHMS; `check` refuses an operator the algorithm cannot run, before anything is built."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..analysis.shapes import label
from ..codegen.conv_spec import ConvMatch, ConvSpec, NotAConvolution, SeparableMatch, match_conv, match_separable
from ..ir.graph import OperatorGraph
from .errors import CompileError


def any_operator(graph: OperatorGraph, bindings: Mapping[str, int]) -> None:
    """Every operator that can be lowered: nothing to refuse."""


def convolutions(name: str, what: str = "convolutions", why_not: Callable[[ConvSpec], str] = lambda spec: ""):
    """The check of an algorithm that runs `what` only: the operator read as a convolution
    (core.codegen.conv_spec), or a CompileError naming the node that makes it something else,
    or, when `why_not(spec)` says why, the nodes of the convolution it cannot run."""

    def check(graph: OperatorGraph, bindings: Mapping[str, int]) -> ConvMatch:
        try:
            conv = match_conv(graph, bindings)
        except NotAConvolution as e:
            raise CompileError(f"algorithm {name!r} runs {what} only: {e}") from None
        reason = why_not(conv.spec)
        if reason:
            nodes = ", ".join(label(graph, node) for node in conv.nodes)
            raise CompileError(
                f"algorithm {name!r} runs {what} only: {graph.name or 'the operator'} ({nodes}) "
                f"is a {conv.spec.describe()}: {reason}"
            )
        return conv

    return check


def _winograd_refuses(spec: ConvSpec) -> str:
    """Why F(m x m, 3x3) cannot compute this convolution ("" when it can)."""
    if spec.kernel != (3, 3) or spec.stride != (1, 1):
        return "Winograd's F(m x m, 3x3) transforms need a 3x3 window at stride 1"
    return ""


def separable_convolution(graph: OperatorGraph, bindings: Mapping[str, int]) -> SeparableMatch:
    """The operator read as a depthwise then a pointwise convolution, or a CompileError naming
    the node that makes it something else."""
    try:
        return match_separable(graph, bindings)
    except NotAConvolution as e:
        raise CompileError(f"algorithm 'separable' runs depthwise-separable convolutions only: {e}") from None


gspc_convolution = convolutions("gspc", "grouped convolutions")
winograd_convolution = convolutions("winograd", "3x3 stride-1 convolutions", _winograd_refuses)


AUTO = "auto"  # not an algorithm of its own: the fastest of the others
SEQUENCE = "sequence"


@dataclass(frozen=True)
class Algorithm:
    name: str
    #: 'module:Class' of its core.compile.kernels.protocol.Kernel (imports TVM); None for AUTO,
    #: which measures the others (core.compile.auto)
    kernel: str | None
    description: str  # one line for --help
    #: check(graph, bindings) raises a CompileError naming the node when the algorithm cannot
    #: run the operator (the graph's own node names, so the message points at the user's nodes)
    check: Callable[[OperatorGraph, Mapping[str, int]], object] = any_operator
    tiles: bool = False  # takes the request's (T_O, T_I) tile sizes
    #: runs the schedule of the transformation sequence the operator came from, so it needs one
    needs_sequence: bool = False


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm(
            AUTO,
            None,
            "every algorithm that can run the operator, each tuned with the same budget; the fastest is kept and named",
        ),
        Algorithm("default", "core.compile.kernels.default:DefaultKernel", "TVM's own lowering of the operator"),
        Algorithm(
            "gspc",
            "core.compile.kernels.gspc:GspcKernel",
            "grouped spatial pack convolution (grouped convolutions only)",
            check=gspc_convolution,
            tiles=True,
        ),
        Algorithm(
            "nchwc",
            "core.compile.kernels.nchwc:NchwcKernel",
            "blocked NCHW[x]c layout as TVM's x86 schedules use, tuned with MetaSchedule (convolutions only)",
            check=convolutions("nchwc"),
        ),
        Algorithm(
            "im2col",
            "core.compile.kernels.im2col:Im2colKernel",
            "im2col matrix + GEMM, tuned with MetaSchedule (convolutions only)",
            check=convolutions("im2col"),
        ),
        Algorithm(
            "winograd",
            "core.compile.kernels.winograd:WinogradKernel",
            "Winograd F(4x4,3x3) (F(2x2,3x3) on small outputs), tuned with MetaSchedule (3x3 stride-1 convolutions)",
            check=winograd_convolution,
        ),
        Algorithm(
            "separable",
            "core.compile.kernels.separable:SeparableKernel",
            "depthwise then pointwise convolution fused: each row's depthwise output computed just before "
            "the pointwise GEMM reads it, tuned over a tile grid (depthwise-separable convolutions)",
            check=separable_convolution,
        ),
        Algorithm(
            SEQUENCE,
            "core.compile.kernels.sequence_schedule:SequenceKernel",
            "the schedule of the transformation sequence the operator came from (NAS-PTE), "
            "MetaSchedule on its loop nest when tuned (operators found by sequence search or read from a sequence)",
            needs_sequence=True,
        ),
    )
}


def algorithm(name: str) -> Algorithm:
    """The registered algorithm `name`, or a CompileError listing those there are."""
    if name not in ALGORITHMS:
        raise CompileError(f"unknown algorithm {name!r} (use {' or '.join(ALGORITHMS)})")
    return ALGORITHMS[name]


def algorithms_for(
    graph: OperatorGraph, bindings: Mapping[str, int], sequence: bool = False
) -> tuple[list[str], list[str]]:
    """(the algorithms that can run the operator, why each of the others cannot); AUTO, which
    chooses among them, is not one of them, nor is an algorithm needing the operator's
    transformation sequence unless `sequence` says it comes with one."""
    runs, refused = [], []
    for a in ALGORITHMS.values():
        if a.kernel is None:
            continue
        if a.needs_sequence and not sequence:
            continue  # not a limit of this operator: it came without a sequence
        try:
            a.check(graph, bindings)
            runs.append(a.name)
        except CompileError as e:
            refused.append(str(e))
    return runs, refused


def no_sequence(name: str) -> str:
    """Why an algorithm that needs a sequence cannot run an operator measured without one."""
    return (
        f"algorithm {name!r} runs the schedule of the transformation sequence an operator came from: "
        "this one comes without a sequence (measure a sequence file, or a result found by sequence search)"
    )


def auto_summary(details: dict) -> str:
    """One line for a result kept by auto, e.g. 'auto kept nchwc, the fastest in alternating rounds of nchwc 2.1 ms,
    default 3.3 ms; refused: ...'; "" for any other result."""
    auto = details.get("auto")
    if not auto:
        return ""
    timed = sorted(auto["latency_ms"].items(), key=lambda pair: pair[1])
    parts = [
        f"auto kept {auto['kept']}, the fastest in alternating rounds of "
        + ", ".join(f"{n} {ms:.4g} ms" for n, ms in timed)
    ]
    parts += [f"{name} failed: {why}" for name, why in auto["failed"].items()]
    parts += [f"refused: {why}" for why in auto["refused"]]
    return "; ".join(parts)
