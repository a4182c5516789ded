"""Operator graph -> TVM tensor expressions -> PrimFunc (and its TVMScript).

The graph is checked and sized by the same plan as the torch module
(core.codegen.torch_plan), so both see the same steps, shapes and weights.
Views become lazy index remappings (core.codegen.tvm_views), contractions and
reduce chains one reduction stage each, split where Syno's rfactor saves work
(core.codegen.tvm_reduce, as core.analysis.staging decides, the cost model's counts too);
other arithmetic gets one stage per primitive.

The PrimFunc "main" takes (x [N, *input], the weights in the torch module's
parameter order and layout, y [N, *output]) and writes y. Importing this module
imports TVM: do it in worker processes only."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from math import prod

import tvm
from tvm import te, tirx

from ..analysis.contraction import reduction_chains
from ..analysis.indexing import Indexes, axes_reduction, fc_reduction, flatten, share_reduction, unflatten
from ..analysis.shapes import label
from ..ir.graph import INPUT, OUTPUT, OperatorGraph
from ..ir.primitives import Broadcast, Concat, ElementWise, Fold, FullyConnected, Reduce, Share, Softmax
from ..ir.primitives.blending import match
from .errors import CodegenError
from .torch_plan import Plan, Step, make_plan, python_names
from .tvm_lazy import DTYPE, Lazy, Stages
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
    chains = {h: c for h, c in reduction_chains(graph).items() if isinstance(graph.prim(h), Reduce)}
    merged = {r for chain in chains.values() for r in chain}
    by_node = {s.node: s for s in plan.steps}
    for step in plan.steps:
        if step.node in merged:
            continue
        chain = [by_node[r] for r in chains.get(step.node, [])]
        node = _Node(
            step,
            [env[s] for s in graph.sources(step.node)],
            weights.get(step.node),
            names[step.node],
            label(graph, step.node),
            chain,
        )
        produced = [step.node, *step.absorbed, *(c.node for c in chain)][-1]  # the value this stage holds
        env[produced] = _lower_step(stages, node)
    result = env[graph.sources(OUTPUT)[0]]
    y = stages.materialise(result, "y", "output")
    if y is x:  # the operator is the identity: y still needs a stage of its own
        y = stages.compute(result.shape, lambda *i: x[i], "y", "output")
    func = te.create_prim_func([x, *weights.values(), y])
    return Lowered(plan, batch, func.with_attr("global_symbol", "main"))


def tvmscript(graph: OperatorGraph, bindings: Mapping[str, int] | None = None, batch: int = 1) -> str:
    """The PrimFunc as TVMScript text (what `tessera codegen --target tvmscript` prints)."""
    return lower(graph, bindings, batch).module().script()


def _lower_step(stages: Stages, node: _Node) -> Lazy:
    prim = node.step.prim
    if type(prim) in VIEWS:
        return VIEWS[type(prim)](stages, node.step, node.ins[0], node.name)
    lowering = ARITHMETIC.get(type(prim))
    if lowering is None:
        raise CodegenError(f"{node.where}: no TVM lowering for primitive {prim.op!r}")
    return lowering(stages, node)


def _elementwise(stages: Stages, node: _Node) -> Lazy:
    (x,), fn = node.ins, UNARY[node.step.prim.params["fn"]]
    return Lazy.of(stages.compute(x.shape, lambda *i: fn(stages.read(x, i)), node.name, node.where))


def _broadcast(stages: Stages, node: _Node) -> Lazy:
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
            mid = unflatten(tirx.floordiv(flatten(i[p:rhs_end], rhs_mid), repeat), lhs_mid, tirx)
        return [*i[:p], *mid, *i[rhs_end:]]

    fn = BINARY[step.prim.params["fn"]]
    return Lazy.of(
        stages.compute(
            rhs.shape, lambda *i: fn(stages.read(lhs, lhs_index(list(i))), stages.read(rhs, i)), node.name, node.where
        )
    )


def _concat(stages: Stages, node: _Node) -> Lazy:
    """A's elements, then B's along the axis: each output element reads exactly one of them."""
    a, b = node.ins
    d = node.step.prim.axis(node.step.ins[0]) + 1
    split = node.step.in_shapes[0][d - 1]

    def element(*i):
        shifted = [*i[:d], i[d] - split, *i[d + 1 :]]
        return tirx.if_then_else(i[d] < split, stages.read(a, list(i)), stages.read(b, shifted))

    return Lazy.of(stages.compute(node.shape(node.step.out_shape), element, node.name, node.where))


def _fold(stages: Stages, node: _Node) -> Lazy:
    step = node.step
    d = step.prim.axis(step.ins[0]) + 1
    size = step.in_shapes[0][d - 1]
    avg = step.prim.params["fn"] == "avg"
    return _reduction(
        stages, node, axes_reduction(node.ins[0].shape, [d]), "sum" if avg else "max", 1 / size if avg else 1
    )


def _reduce(stages: Stages, node: _Node) -> Lazy:
    """A reduce and the reduces chained after it: one sum over all their axes."""
    steps = [node.step, *node.chain]
    removed = [s.prim.axis(s.ins[0]) + 1 for s in steps]
    return _reduction(stages, node, axes_reduction(node.ins[0].shape, removed), out_shape=steps[-1].out_shape)


def _share(stages: Stages, node: _Node) -> Lazy:
    """y[o, idx] = x[idx] * w[o, idx[dims]] summed over the absorbed reduces' axes: one contraction."""
    step, prim = node.step, node.step.prim
    assert isinstance(prim, Share)  # ARITHMETIC sends only shares here
    out = step.own_weight().shape[0] if prim.size("out") is not None else None
    shared = prim.shared_axes(step.ins[0])
    return _reduction(stages, node, share_reduction(node.ins[0].shape, out, step.reduced, shared))


def _fc(stages: Stages, node: _Node) -> Lazy:
    """Channel axes flattened in order to P; weight [out, P/groups]; output o reads block o // (out/groups).
    The block's reduction runs over the channel axes themselves where block boundaries fall on them,
    so indices stay affine (a conv's C, K_h, K_w), else over one flat axis."""
    step = node.step
    channels, spatial = [a + 1 for a in step.ins[0].channel_dims], [a + 1 for a in step.ins[0].spatial_dims]
    out, block = step.own_weight().shape
    return _reduction(stages, node, fc_reduction(node.ins[0].shape, channels, spatial, (out, block), tirx))


def _reduction(
    stages: Stages, node: _Node, idx: Indexes, combiner: str = "sum", scale: float = 1.0, out_shape=None
) -> Lazy:
    """The node's reduction over its first input (and its weight, where `idx` reads one)."""
    shape = node.shape(node.step.out_shape if out_shape is None else out_shape)
    weight = node.weight if idx.weight is not None else None
    return build_reduction(
        stages,
        Reduction(
            node.name, node.where, shape, idx.extents, node.ins[0], idx.operand, weight, idx.weight, combiner, scale
        ),
    )


def _softmax(stages: Stages, node: _Node) -> Lazy:
    """exp(x - max) / sum(exp(x - max)) along the axis, the exponentials computed once."""
    x, name, where = node.ins[0], node.name, node.where
    d = node.step.prim.axis(node.step.ins[0]) + 1
    size, reduced = x.shape[d], (*x.shape[:d], *x.shape[d + 1 :])

    along = axes_reduction(x.shape, [d]).operand

    def others(i):
        return (*i[:d], *i[d + 1 :])

    top = build_reduction(stages, Reduction(f"{name}_max", where, reduced, (size,), x, along, combiner="max"))
    exp = stages.compute(
        x.shape, lambda *i: tirx.exp(stages.read(x, i) - stages.read(top, others(i))), f"{name}_exp", where
    )
    total = build_reduction(stages, Reduction(f"{name}_sum", where, reduced, (size,), Lazy.of(exp), along))
    return Lazy.of(stages.compute(x.shape, lambda *i: exp[i] / stages.read(total, others(i)), name, where))


ARITHMETIC = {
    ElementWise: _elementwise,
    Broadcast: _broadcast,
    Concat: _concat,
    Fold: _fold,
    Reduce: _reduce,
    Share: _share,
    FullyConnected: _fc,
    Softmax: _softmax,
}
