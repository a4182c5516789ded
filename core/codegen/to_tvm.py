"""Operator graph -> TVM tensor expressions -> PrimFunc (and its TVMScript).

The graph is checked and sized by the same plan as the torch module
(core.codegen.torch_plan), so both see the same steps, shapes and weights.
Views become lazy index remappings (core.codegen.tvm_views), contractions and
reduce chains one reduction stage each, split where Syno's rfactor saves work
(core.codegen.tvm_reduce); other arithmetic gets one stage per primitive.

The PrimFunc "main" takes (x [N, *input], the weights in the torch module's
parameter order and layout, y [N, *output]) and writes y. Importing this module
imports TVM: do it in worker processes only."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from math import prod

import tvm
from tvm import te, tirx

from ..analysis.shapes import label
from ..ir.graph import INPUT, OUTPUT, OperatorGraph
from ..ir.primitives import Broadcast, Concat, ElementWise, Fold, FullyConnected, Reduce, Share, Softmax
from ..ir.primitives.blending import match
from .errors import CodegenError
from .torch_plan import Plan, Step, make_plan, python_names
from .tvm_lazy import DTYPE, Index, Lazy, Stages
from .tvm_reduce import Reduction, build_reduction
from .tvm_views import VIEWS

_ZERO = tirx.const(0.0, DTYPE)
UNARY: dict[str, Callable] = {
    "relu": lambda v: tirx.max(v, _ZERO),
    "gelu": lambda v: 0.5 * v * (1.0 + tirx.erf(v * 0.7071067811865476)),  # exact, as torch's default
    "sigmoid": tirx.sigmoid,
    "tanh": tirx.tanh,
    "abs": tirx.abs,
    "exp": tirx.exp,
    "neg": lambda v: -v,
    "sin": tirx.sin,
    "sqrt": lambda v: tirx.sqrt(tirx.abs(v)),
    "sqr": lambda v: v * v,
}
BINARY: dict[str, Callable] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "min": tirx.min,
    "max": tirx.max,
}


@dataclass(frozen=True)
class Lowered:
    """The PrimFunc with what a caller needs to feed it: the plan (shapes, weights in order)."""

    plan: Plan
    batch: int
    func: tirx.PrimFunc

    @property
    def weights(self) -> list:
        """The torch module's weights (name, shape), in the PrimFunc's argument order."""
        return [s.weight for s in self.plan.steps if s.weight is not None]

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.batch, *self.plan.input_shape)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.batch, *self.plan.output_shape)

    def module(self) -> tvm.IRModule:
        return tvm.IRModule({"main": self.func})


@dataclass(frozen=True)
class _Node:
    """One step to lower, with what it reads."""

    step: Step
    ins: list[Lazy]  # per input port
    weight: te.Tensor | None
    name: str  # stage name
    where: str  # "share conv", for errors
    chain: list[Step]  # reduces merged into this reduce

    @property
    def batch(self) -> int:
        return self.ins[0].shape[0]

    def shape(self, out_shape: Sequence[int]) -> tuple[int, ...]:
        """A TE shape: the batch, then `out_shape`."""
        return (self.batch, *out_shape)


def lower(graph: OperatorGraph, bindings: Mapping[str, int] | None = None, batch: int = 1) -> Lowered:
    """Tensor expressions for the operator at the given sizes (graph's bindings overridden by `bindings`)."""
    if batch < 1:
        raise CodegenError(f"batch size must be positive, got {batch}")
    plan = make_plan(graph, bindings)
    stages = Stages()
    names = python_names(graph)
    x = stages.placeholder((batch, *plan.input_shape), "x", "input")
    weights = {
        s.node: stages.placeholder(s.weight.shape, s.weight.name, label(graph, s.node))
        for s in plan.steps
        if s.weight is not None
    }
    env: dict[str, Lazy] = {INPUT: Lazy.of(x)}
    chains = _reduce_chains(plan)
    merged = {r for chain in chains.values() for r in chain}
    by_node = {s.node: s for s in plan.steps}
    for step in plan.steps:
        if step.node in merged:
            continue
        chain = [by_node[r] for r in chains.get(step.node, [])]
        node = _Node(
            step,
            [env[s] for s in graph.inputs_of(step.node)],
            weights.get(step.node),
            names[step.node],
            label(graph, step.node),
            chain,
        )
        produced = [step.node, *step.absorbed, *(c.node for c in chain)][-1]  # the value this stage holds
        env[produced] = _lower_step(stages, node)
    result = env[graph.inputs_of(OUTPUT)[0]]
    y = stages.materialise(result, "y", "output")
    if y is x:  # the operator is the identity: y still needs a stage of its own
        y = stages.compute(result.shape, lambda *i: x[i], "y", "output")
    func = te.create_prim_func([x, *weights.values(), y])
    return Lowered(plan, batch, func.with_attr("global_symbol", "main"))


def tvmscript(graph: OperatorGraph, bindings: Mapping[str, int] | None = None, batch: int = 1) -> str:
    """The PrimFunc as TVMScript text (what `tessera codegen --target tvmscript` prints)."""
    return lower(graph, bindings, batch).module().script()


def _reduce_chains(plan: Plan) -> dict[str, list[str]]:
    """Reduce step -> the reduce steps that follow it one after another (each the only consumer
    of the previous); they become one reduction. Shares absorb their reduces in the plan already."""
    g = plan.graph
    steps = {s.node: s for s in plan.steps}
    chains: dict[str, list[str]] = {}
    taken: set[str] = set()
    for step in plan.steps:
        if not isinstance(step.prim, Reduce) or step.node in taken:
            continue
        chain, cur = [], step.node
        while True:
            succ = list(g.g.successors(cur))
            if len(succ) != 1 or succ[0] not in steps or not isinstance(steps[succ[0]].prim, Reduce):
                break
            cur = succ[0]
            chain.append(cur)
        chains[step.node] = chain
        taken.update(chain)
    return chains


def _lower_step(stages: Stages, node: _Node) -> Lazy:
    prim = node.step.prim
    if type(prim) in VIEWS:
        return VIEWS[type(prim)](stages, node.step, node.ins[0], node.name)
    lowering = _ARITHMETIC.get(type(prim))
    if lowering is None:
        raise CodegenError(f"{node.where}: no TVM lowering for primitive {prim.op!r}")
    return Lazy.of(lowering(stages, node))


def _elementwise(stages: Stages, node: _Node) -> te.Tensor:
    (x,), fn = node.ins, UNARY[node.step.prim.params["fn"]]
    return stages.compute(x.shape, lambda *i: fn(stages.read(x, i)), node.name, node.where)


def _broadcast(stages: Stages, node: _Node) -> te.Tensor:
    """RHS's middle read as [L, M]: each LHS middle element is repeated over M consecutive RHS elements."""
    step, (lhs, rhs) = node.step, node.ins
    m = match(*step.ins)
    lhs_shape, rhs_shape = step.in_shapes
    p = m.prefix + 1  # TE axis where the middles start
    lhs_mid, rhs_mid = lhs_shape[m.prefix : m.lhs_suffix_start], rhs_shape[m.prefix : m.rhs_suffix_start]
    rhs_end = m.rhs_suffix_start + 1
    aligned = tuple(rhs_mid[: len(lhs_mid)]) == tuple(lhs_mid)
    repeat = prod(rhs_mid) // prod(lhs_mid)

    def lhs_index(i):
        if aligned:  # LHS's middle is RHS's leading middle axes
            mid = list(i[p : p + len(lhs_mid)])
        else:
            mid = _unflatten(tirx.floordiv(_flatten(i[p:rhs_end], rhs_mid), repeat), lhs_mid)
        return [*i[:p], *mid, *i[rhs_end:]]

    fn = BINARY[step.prim.params["fn"]]
    return stages.compute(
        rhs.shape, lambda *i: fn(stages.read(lhs, lhs_index(list(i))), stages.read(rhs, i)), node.name, node.where
    )


def _concat(stages: Stages, node: _Node) -> te.Tensor:
    """A's elements, then B's along the axis: each output element reads exactly one of them."""
    a, b = node.ins
    d = node.step.prim.axis(node.step.ins[0]) + 1
    split = node.step.in_shapes[0][d - 1]

    def element(*i):
        shifted = [*i[:d], i[d] - split, *i[d + 1 :]]
        return tirx.if_then_else(i[d] < split, stages.read(a, list(i)), stages.read(b, shifted))

    return stages.compute(node.shape(node.step.out_shape), element, node.name, node.where)


def _fold(stages: Stages, node: _Node) -> te.Tensor:
    step = node.step
    d = step.prim.axis(step.ins[0]) + 1
    size = step.in_shapes[0][d - 1]
    avg = step.prim.params["fn"] == "avg"
    return build_reduction(
        stages,
        Reduction(
            node.name,
            node.where,
            node.shape(step.out_shape),
            (size,),
            node.ins[0],
            lambda o, r: [*o[:d], r[0], *o[d:]],
            combiner="sum" if avg else "max",
            scale=1.0 / size if avg else 1.0,
        ),
    )


def _reduce(stages: Stages, node: _Node) -> te.Tensor:
    """A reduce and the reduces chained after it: one sum over all their axes."""
    steps, x = [node.step, *node.chain], node.ins[0]
    kept, removed = _split_axes(len(x.shape), [s.prim.axis(s.ins[0]) + 1 for s in steps])
    return build_reduction(
        stages,
        Reduction(
            node.name,
            node.where,
            node.shape(steps[-1].out_shape),
            tuple(x.shape[a] for a in removed),
            x,
            lambda o, r: _place(len(x.shape), kept, o, removed, r),
        ),
    )


def _share(stages: Stages, node: _Node) -> te.Tensor:
    """y[o, idx] = x[idx] * w[o, idx[dims]] summed over the absorbed reduces' axes: one contraction."""
    step, x = node.step, node.ins[0]
    lead = 1 if step.prim.size("out") is not None else 0
    full = [x.shape[0], *([step.weight.shape[0]] if lead else []), *x.shape[1:]]  # share output, TE axes
    kept, removed = _split_axes(len(full), [d + 1 for d in step.reduced])
    weight_axes = [*([1] if lead else []), *(d + 1 + lead for d in step.prim.shared_axes(step.ins[0]))]

    def axes(o, r):
        return _place(len(full), kept, o, removed, r)

    return build_reduction(
        stages,
        Reduction(
            node.name,
            node.where,
            node.shape(step.out_shape),
            tuple(full[a] for a in removed),
            x,
            lambda o, r: [a for i, a in enumerate(axes(o, r)) if i == 0 or i > lead],
            node.weight,
            lambda o, r: [axes(o, r)[a] for a in weight_axes],
        ),
    )


def _fc(stages: Stages, node: _Node) -> te.Tensor:
    """Channel axes flattened in order to P; weight [out, P/groups]; output o reads block o // (out/groups).
    The block's reduction runs over the channel axes themselves where block boundaries fall on them,
    so indices stay affine (a conv's C, K_h, K_w), else over one flat axis."""
    step, x = node.step, node.ins[0]
    channels, spatial = [a + 1 for a in step.ins[0].channel_dims], [a + 1 for a in step.ins[0].spatial_dims]
    sizes = [x.shape[a] for a in channels]
    out, block = step.weight.shape
    per_group = out // (prod(sizes) // block)
    extents, channel_index = _block_reduction(sizes, block)

    def x_index(o, r):
        idx = [0] * len(x.shape)
        idx[0] = o[0]
        for a, v in zip(channels, channel_index(tirx.floordiv(o[1], per_group), r)):
            idx[a] = v
        for a, v in zip(spatial, o[2:]):
            idx[a] = v
        return idx

    return build_reduction(
        stages,
        Reduction(
            node.name,
            node.where,
            node.shape(step.out_shape),
            extents,
            x,
            x_index,
            node.weight,
            lambda o, r: [o[1], _flatten(r, extents)],
        ),
    )


def _softmax(stages: Stages, node: _Node) -> te.Tensor:
    """exp(x - max) / sum(exp(x - max)) along the axis, the exponentials computed once."""
    x, name, where = node.ins[0], node.name, node.where
    d = node.step.prim.axis(node.step.ins[0]) + 1
    size, reduced = x.shape[d], (*x.shape[:d], *x.shape[d + 1 :])

    def along(o, r):
        return [*o[:d], r[0], *o[d:]]

    def others(i):
        return (*i[:d], *i[d + 1 :])

    top = build_reduction(stages, Reduction(f"{name}_max", where, reduced, (size,), x, along, combiner="max"))
    exp = stages.compute(x.shape, lambda *i: tirx.exp(stages.read(x, i) - top[others(i)]), f"{name}_exp", where)
    total = build_reduction(stages, Reduction(f"{name}_sum", where, reduced, (size,), Lazy.of(exp), along))
    return stages.compute(x.shape, lambda *i: exp[i] / total[others(i)], name, where)


def _block_reduction(sizes: list[int], block: int) -> tuple[tuple[int, ...], Callable]:
    """Reduction extents over one block of `block` consecutive flattened channels, and
    index(group, r) -> channel coordinates: trailing axes whole, at most one axis cut."""
    rest, j = block, len(sizes)
    while j > 0 and rest % sizes[j - 1] == 0:
        rest //= sizes[j - 1]
        j -= 1
    if rest == 1:  # axes j.. whole; the group picks the leading axes
        return tuple(sizes[j:]), lambda group, r: [*_unflatten(group, sizes[:j]), *r]
    if j > 0 and sizes[j - 1] % rest == 0:  # axis j-1 cut into (outer from the group, `rest` reduced)
        outer = [*sizes[: j - 1], sizes[j - 1] // rest]

        def cut(group, r):
            g = _unflatten(group, outer)
            return [*g[:-1], g[-1] * rest + r[0], *r[1:]]

        return (rest, *sizes[j:]), cut
    return (block,), lambda group, r: _unflatten(group * block + r[0], sizes)


_ARITHMETIC = {
    ElementWise: _elementwise,
    Broadcast: _broadcast,
    Concat: _concat,
    Fold: _fold,
    Reduce: _reduce,
    Share: _share,
    FullyConnected: _fc,
    Softmax: _softmax,
}


# -- index helpers --------------------------------------------------------------------
def _flatten(index: Sequence, sizes: Sequence[int]):
    """Row-major position of `index` in an array of `sizes`."""
    flat = 0
    for i, s in zip(index, sizes):
        flat = flat * s + i
    return flat


def _unflatten(flat, sizes: Sequence[int]) -> list:
    """Row-major coordinates of position `flat` in an array of `sizes`."""
    coords, stride = [], prod(sizes)
    for k, s in enumerate(sizes):
        stride //= s
        v = tirx.floordiv(flat, stride) if stride > 1 else flat
        coords.append(tirx.floormod(v, s) if k > 0 else v)
    return coords


def _split_axes(ndim: int, removed_in_turn: Sequence[int]) -> tuple[list[int], list[int]]:
    """Axes kept and axes removed when axes are removed one after another by position."""
    positions = list(range(ndim))
    removed = [positions.pop(d) for d in removed_in_turn]
    return positions, removed


def _place(ndim: int, kept: list[int], o: Index, removed: list[int], r: Index) -> Index:
    idx = [0] * ndim
    for a, v in zip(kept, o):
        idx[a] = v
    for a, v in zip(removed, r):
        idx[a] = v
    return idx
