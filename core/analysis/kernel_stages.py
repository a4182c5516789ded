"""The reductions of the kernel TVM builds (core.codegen.to_tvm), read in pure Python for
the cost model: for every reduction, what core.analysis.staging needs to stage it the way
the code generator will, at concrete sizes.

Views are index remappings down to a root, as in core.codegen.tvm_lazy: `Operand` follows
the same rules (core.analysis.indexing's remappings; an unfold or shift whose axis does not
reach the root one-to-one reads a copy of the view instead, a new root) with `Coord`
expressions in place of TVM's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from math import prod

from ..ir import primitives as prims
from ..ir.graph import INPUT, OperatorGraph
from . import staging
from .contraction import reduction_chains
from .indexing import (
    PURE,
    Coord,
    Index,
    Indexes,
    as_coord,
    axes_reduction,
    expand_view,
    fc_reduction,
    merge_view,
    one_to_one,
    share_reduction,
    split_view,
    stride_view,
    unfold_view,
)
from .shapes import ShapeReport

BATCH = 1  # costs are per sample


@dataclass(frozen=True)
class Operand:
    """A tensor read through views: `index` maps an element to coordinates of `root`."""

    root: tuple[int, ...]
    padded: tuple[bool, ...]
    shape: tuple[int, ...]
    index: Callable[[Index], Index]

    @classmethod
    def of(cls, shape: tuple[int, ...]) -> Operand:
        return cls(shape, (False,) * len(shape), shape, list)

    def view(self, shape: tuple[int, ...], remap: Callable[[Index], Index]) -> Operand:
        inner = self.index
        return Operand(self.root, self.padded, shape, lambda idx: inner(remap(list(idx))))

    def pass_through(self, axis: int) -> int | None:
        """The root axis that `axis` reads one-to-one (as core.codegen.tvm_views decides)."""
        coords = [as_coord(c) for c in self.index([Coord.variable(f"i{a}") for a in range(len(self.shape))])]
        return one_to_one(coords, f"i{axis}", self.root, self.shape[axis], self.padded)


def reductions(
    graph: OperatorGraph, report: ShapeReport, shapes: Mapping[str, tuple[int, ...]], bindings: Mapping[str, int]
) -> dict[str, list[staging.Reduction]]:
    """Node -> the reductions TVM builds for it: a contraction or reduce chain at its head
    (the chain's other reduces have none), a fold, an fc, or a softmax's max and sum."""
    chains = reduction_chains(graph)
    absorbed = {r for chain in chains.values() for r in chain}
    operands: dict[str, Operand] = {INPUT: Operand.of((BATCH, *shapes[INPUT]))}
    found: dict[str, list[staging.Reduction]] = {}
    primitive = set(graph.primitive_nodes())
    for node in graph.topological_order():
        if node not in primitive or node not in report.shapes or node in absorbed:
            continue
        first = graph.inputs_of(node)[0]
        if first is None or first not in operands:
            continue
        prim, x = graph.prim(node), operands[first]
        in_type, out = report.shapes[first], (BATCH, *shapes[node])
        view = VIEWS.get(type(prim))
        if view is not None:
            operands[node] = view(prim, in_type, x, out)
            continue
        last = chains[node][-1] if chains.get(node) else node
        if last not in shapes:  # the chain runs into an error: nothing after it is built or costed
            continue
        operands[last] = Operand.of((BATCH, *shapes[last]))
        d = prim.axis(in_type) + 1 if isinstance(prim, (prims.Fold, prims.Softmax)) else 0
        if isinstance(prim, (prims.Share, prims.Reduce)):
            idx = _chain(graph, report, node, chains[node], x, bindings)
            found[node] = [_reduction((BATCH, *shapes[last]), idx, x)]
            operands[last] = _result(found[node][0], idx, x)
        elif isinstance(prim, prims.Fold):
            found[node] = [_reduction(out, axes_reduction(x.shape, [d]), x)]
        elif isinstance(prim, prims.FullyConnected):
            channels, spatial = [a + 1 for a in in_type.channel_dims], [a + 1 for a in in_type.spatial_dims]
            w = prim.weight_shape([in_type], report.shapes[node])
            weight = (w[0].to_int(bindings), w[1].to_int(bindings))
            found[node] = [_reduction(out, fc_reduction(x.shape, channels, spatial, weight, PURE), x)]
        elif isinstance(prim, prims.Softmax):
            reduced = (*x.shape[:d], *x.shape[d + 1 :])
            idx = axes_reduction(x.shape, [d])
            found[node] = [_reduction(reduced, idx, x), _reduction(reduced, idx, Operand.of(x.shape))]
    return found


def _chain(graph, report, node, chain, x: Operand, bindings) -> Indexes:
    """A share with its reduces, or a reduce with those chained after it."""
    prim, in_type = graph.prim(node), report.shapes[graph.inputs_of(node)[0]]
    axes = [graph.prim(r).axis(report.shapes[graph.inputs_of(r)[0]]) for r in chain]
    if isinstance(prim, prims.Reduce):
        return axes_reduction(x.shape, [a + 1 for a in (prim.axis(in_type), *axes)])
    size = prim.size("out")
    lead = None if size is None else size.to_int(bindings)
    return share_reduction(x.shape, lead, axes, prim.shared_axes(in_type))


def _result(red: staging.Reduction, idx: Indexes, x: Operand) -> Operand:
    """What a reduction's output is to what reads it, as core.codegen.tvm_reduce builds it:
    where its second stage only re-indexes the first (a gather: no sums left, no weight), a
    view of the first stage's tensor, which a reduction after it then reads (and stages) in
    place of the larger output; otherwise a tensor of its own."""
    chosen = staging.plan(red)
    if len(chosen.stages) < 2 or chosen.stages[1].extents or chosen.stages[1].weighted:
        return Operand.of(red.shape)
    unreduced = [0] * len(idx.extents)  # every sum is in the first stage: none reads these

    def index(o: Index) -> Index:
        at = x.index(idx.operand(o, unreduced))
        return [at[a] for a in chosen.rest] + [o[int(name[1:])] for name in chosen.carried]

    padded = tuple(x.padded[a] for a in chosen.rest) + (False,) * len(chosen.carried)
    return Operand(chosen.stages[0].shape, padded, red.shape, index)


def _reduction(shape: tuple[int, ...], idx: Indexes, x: Operand) -> staging.Reduction:
    outs = [Coord.variable(f"o{i}") for i in range(len(shape))]
    reds = [Coord.variable(f"r{j}") for j in range(len(idx.extents))]
    coords = tuple(as_coord(c) for c in x.index(idx.operand(outs, reds)))
    weight = None
    if idx.weight is not None:
        weight = frozenset().union(*(as_coord(c).uses for c in idx.weight(outs, reds)))
    return staging.Reduction(tuple(shape), idx.extents, x.root, x.padded, coords, weight)


# -- views, as core.codegen.tvm_views lowers them -------------------------------------------------
def _split(prim, in_type, x: Operand, out) -> Operand:
    d = prim.axis(in_type) + 1
    return x.view(out, split_view(d, out[d + 1]))


def _merge(prim, in_type, x: Operand, out) -> Operand:
    d = prim.axis(in_type) + 1
    return x.view(out, merge_view(d, x.shape[d + 1], PURE))


def _shift(prim, in_type, x: Operand, out) -> Operand:
    d = prim.axis(in_type) + 1
    if -prim.params["amount"] % x.shape[d] == 0 or x.pass_through(d) is not None:
        return x  # the root is rolled in place: same shape, same coordinates
    return Operand.of(x.shape)


def _expand(prim, in_type, x: Operand, out) -> Operand:
    return x.view(out, expand_view(prim.params["dim"] % (len(in_type) + 1) + 1))


def _stride(prim, in_type, x: Operand, out) -> Operand:
    d = prim.axis(in_type) + 1
    return x.view(out, stride_view(d, x.shape[d] // out[d]))


def _unfold(prim, in_type, x: Operand, out) -> Operand:
    d = prim.axis(in_type) + 1
    k_axis = in_type.spatial_dims[0] + 1
    k = out[k_axis]
    root_axis = x.pass_through(d)
    if root_axis is None:
        x, root_axis = Operand.of(x.shape), d
    padded = tuple(p or (a == root_axis and k > 1) for a, p in enumerate(x.padded))
    return Operand(x.root, padded, x.shape, x.index).view(out, unfold_view(d, k_axis, k))


VIEWS = {
    prims.Group: _split,
    prims.Split: _split,
    prims.Merge: _merge,
    prims.Shift: _shift,
    prims.Expand: _expand,
    prims.Stride: _stride,
    prims.Unfold: _unfold,
}


def staged_work(
    graph: OperatorGraph, report: ShapeReport, shapes: Mapping[str, tuple[int, ...]], bindings: Mapping[str, int]
) -> dict[str, tuple[int, int]]:
    """Node -> (MACs, FLOPs) of its reductions as the kernel stages them; a softmax adds its
    two element-wise stages (the exponentials, the division)."""
    work = {}
    for node, reds in reductions(graph, report, shapes, bindings).items():
        plans = [staging.plan(r) for r in reds]
        extra = 2 * prod(shapes[node]) if isinstance(graph.prim(node), prims.Softmax) else 0
        work[node] = (sum(p.macs for p in plans), sum(p.flops for p in plans) + extra)
    return work
