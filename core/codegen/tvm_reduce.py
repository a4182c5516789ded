"""Reductions for TVM code generation: one `te.sum`/`te.max` stage per contraction or reduce
chain, or two where staging saves work (Syno's rfactor). Whether and how to stage is
core.analysis.staging's decision, the one the cost model counts; this module reads the
facts it needs off the TVM coordinates and builds the stages it chose."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from tvm import te

from ..analysis import staging
from .tvm_lazy import Index, Lazy, Stages, coord

Coordinates = Callable[[Index, Index], Index]  # (output index, reduction index) -> coordinates


@dataclass(frozen=True)
class Reduction:
    """out[o] = combine_r operand[operand_index(o, r)] * weight[weight_index(o, r)] * scale."""

    name: str
    node: str  # label for errors, e.g. "share conv"
    shape: tuple[int, ...]  # output, batch first
    extents: tuple[int, ...]  # reduction axes
    operand: Lazy
    operand_index: Coordinates
    weight: te.Tensor | None = None
    weight_index: Coordinates | None = None
    combiner: str = "sum"  # sum | max
    scale: float = 1.0


def build_reduction(stages: Stages, red: Reduction) -> Lazy:
    """The reduction's value: its last stage, or a view of its first when the second
    would only gather."""
    outs = [te.var(f"o{i}") for i in range(len(red.shape))]
    reds = [te.var(f"r{j}") for j in range(len(red.extents))]
    chosen = staging.plan(_facts(red, outs, reds))
    if not chosen.early:
        return Lazy.of(_emit(stages, red))
    return _staged(stages, red, chosen, outs, reds)


def _facts(red: Reduction, outs: list, reds: list) -> staging.Reduction:
    """What core.analysis.staging needs to know, read off the TVM coordinates."""
    coords = red.operand.index(red.operand_index(outs, reds))
    weight = None
    if red.weight is not None and red.weight_index is not None:
        weight = frozenset().union(*(coord(c).uses for c in red.weight_index(outs, reds)))
    return staging.Reduction(
        red.shape,
        red.extents,
        tuple(int(s) for s in red.operand.root.shape),
        tuple(p != (0, 0) for p in red.operand.pads),
        tuple(coord(c) for c in coords),
        weight,
    )


def _emit(stages: Stages, red: Reduction) -> te.Tensor:
    def body(o: Index, r: Index):
        value = stages.read(red.operand, red.operand_index(o, r))
        if red.weight is not None and red.weight_index is not None:
            value = value * red.weight[tuple(red.weight_index(o, r))]
        return value * red.scale if red.scale != 1.0 else value

    if not red.extents:
        return stages.compute(red.shape, lambda *o: body(list(o), []), red.name, red.node)
    reducer = te.sum if red.combiner == "sum" else te.max

    def fn(*o):
        axes = [te.reduce_axis((0, e), name=f"r{j}") for j, e in enumerate(red.extents)]
        return reducer(body(list(o), [a.var for a in axes]), axis=axes)

    return stages.compute(red.shape, fn, red.name, red.node)


def _staged(stages: Stages, red: Reduction, chosen: staging.Staging, outs: list, reds: list) -> Lazy:
    """Stage 1 reduces the chosen variables on the operand's root into t[rest root axes,
    carried variables]; stage 2 reads t through the rest of the views. The scale goes with
    stage 1 (a sum's scale distributes over it)."""
    early, rest, carried = chosen.early, chosen.rest, chosen.carried
    root, pads = red.operand.root, red.operand.pads
    coords = red.operand.index(red.operand_index(outs, reds))
    axis_of = {j: next(a for a, c in enumerate(coords) if c.same_as(reds[j])) for j in early}
    late = [j for j in range(len(reds)) if j not in early]
    position = {v.name: ("o", i) for i, v in enumerate(outs)} | {v.name: ("r", j) for j, v in enumerate(reds)}
    t_shape = chosen.stages[0].shape

    def stage1_coords(t_idx: Index, r_early: Index) -> tuple[Index, Index, Index]:
        """Root coordinates and the (output, reduction) index the weight sees in stage 1."""
        o, r = [0] * len(outs), [0] * len(reds)
        for j, v in zip(early, r_early):
            r[j] = v
        for name, v in zip(carried, t_idx[len(rest) :]):
            kind, i = position[name]
            (o if kind == "o" else r)[i] = v
        root_idx = [0] * len(coords)
        for a, v in zip(rest, t_idx):
            root_idx[a] = v
        for j, a in axis_of.items():
            root_idx[a] = r[j]
        return root_idx, o, r

    weight_index = red.weight_index
    first_weight = chosen.weight_first and weight_index is not None

    def stage1_weight(t_idx: Index, r_early: Index) -> Index:
        assert weight_index is not None  # used only where there is a weight
        return weight_index(*stage1_coords(t_idx, r_early)[1:])

    def stage2_weight(o: Index, r_late: Index) -> Index:
        assert weight_index is not None  # used only where there is a weight
        return weight_index(o, full(r_late))

    stage1 = Reduction(
        f"{red.name}_rf",
        red.node,
        tuple(t_shape),
        tuple(red.extents[j] for j in early),
        Lazy.of(root),
        lambda t_idx, r_early: stage1_coords(t_idx, r_early)[0],
        red.weight if first_weight else None,
        stage1_weight if first_weight else None,
        red.combiner,
        red.scale,
    )
    partial = _emit(stages, stage1)

    def full(r_late: Index) -> Index:
        r = [0] * len(reds)
        for j, v in zip(late, r_late):
            r[j] = v
        return r

    def stage2_index(o: Index, r_late: Index) -> Index:
        r = full(r_late)
        at = red.operand.index(red.operand_index(o, r))
        return [at[a] for a in rest] + [(o if position[n][0] == "o" else r)[position[n][1]] for n in carried]

    operand = Lazy(partial, tuple(pads[a] for a in rest) + ((0, 0),) * len(carried), tuple(t_shape), list)
    second = not chosen.weight_first and red.weight is not None and weight_index is not None
    stage2 = replace(
        red,
        extents=tuple(red.extents[j] for j in late),
        operand=operand,
        operand_index=stage2_index,
        weight=red.weight if second else None,
        weight_index=stage2_weight if second else None,
        scale=1.0,
    )
    if not stage2.extents and stage2.weight is None:  # a gather: a view of stage 1, no stage
        return operand.view(red.shape, lambda o: stage2_index(o, []))
    return Lazy.of(_emit(stages, stage2))
