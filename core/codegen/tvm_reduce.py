"""Reductions for TVM code generation: one `te.sum`/`te.max` stage per contraction or reduce
chain, split in two stages where that saves work (Syno's rfactor).

A reduction reads a lazy operand (and optionally a weight) at coordinates built
from output and reduction variables. When a reduction variable indexes one root
axis of the operand one-to-one (e.g. C_in below an unfold), it can be summed on
the root before the one-to-many view replicates it:
`y[h] = sum_{c,k} x[c, h + k]` becomes `t[h'] = sum_c x[c, h']`, `y[h] = sum_k t[h + k]`
(C*K*H -> C*H + K*H operations). The split is used only when it lowers that count."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from math import prod

from tvm import te

from .tvm_lazy import Index, Lazy, Stages, uses

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


def build_reduction(stages: Stages, red: Reduction) -> te.Tensor:
    staged = _rfactor(stages, red)
    return _emit(stages, staged or red)


def _emit(stages: Stages, red: Reduction) -> te.Tensor:
    def body(o: Index, r: Index):
        value = stages.read(red.operand, red.operand_index(o, r))
        if red.weight is not None:
            value = value * red.weight[tuple(red.weight_index(o, r))]
        return value * red.scale if red.scale != 1.0 else value

    if not red.extents:
        return stages.compute(red.shape, lambda *o: body(list(o), []), red.name, red.node)
    reducer = te.sum if red.combiner == "sum" else te.max

    def fn(*o):
        axes = [te.reduce_axis((0, e), name=f"r{j}") for j, e in enumerate(red.extents)]
        return reducer(body(list(o), [a.var for a in axes]), axis=axes)

    return stages.compute(red.shape, fn, red.name, red.node)


def _rfactor(stages: Stages, red: Reduction) -> Reduction | None:
    """Stage 1 reduces, on the operand's root, the variables that index a root axis one-to-one;
    the returned reduction (stage 2) reads stage 1 through the rest of the views."""
    outs = [te.var(f"o{i}") for i in range(len(red.shape))]
    reds = [te.var(f"r{j}") for j in range(len(red.extents))]
    coords = red.operand.index(red.operand_index(outs, reds))
    root, pads = red.operand.root, red.operand.pads
    used = [uses(c) for c in coords]
    early: dict[int, int] = {}  # reduction variable -> the root axis it indexes
    for j, r in enumerate(reds):
        hits = [a for a, c in enumerate(coords) if c.same_as(r)]
        if (
            len(hits) == 1
            and sum(r.name in u for u in used) == 1
            and int(root.shape[hits[0]]) == red.extents[j]
            and pads[hits[0]] == (0, 0)
        ):
            early[j] = hits[0]
    if not early:
        return None
    rest = [a for a in range(len(coords)) if a not in early.values()]
    rest_vars = set().union(*(used[a] for a in rest))
    carried: list[tuple[str, int, int]] = []  # weight variables stage 1 keeps: (kind, position, extent)
    if red.weight is not None:
        wanted = set().union(*(uses(c) for c in red.weight_index(outs, reds)))
        for kind, variables, extents in (("o", outs, red.shape), ("r", reds, red.extents)):
            for i, v in enumerate(variables):
                if v.name in wanted and not (kind == "r" and i in early):
                    if v.name in rest_vars:
                        return None  # the weight ties this variable to the replicated axes
                    carried.append((kind, i, extents[i]))
    t_shape = [int(root.shape[a]) for a in rest] + [e for _, _, e in carried]
    late = [j for j in range(len(reds)) if j not in early]
    single = prod(red.shape) * prod(red.extents)
    split = prod(t_shape) * prod(red.extents[j] for j in early) + prod(red.shape) * prod(red.extents[j] for j in late)
    if split >= single:
        return None

    def stage1_coords(t_idx: Index, r_early: Index) -> tuple[Index, Index, Index]:
        """Root coordinates and the (output, reduction) index the weight sees in stage 1."""
        o, r = [0] * len(outs), [0] * len(reds)
        for j, v in zip(early, r_early):
            r[j] = v
        for (kind, i, _), v in zip(carried, t_idx[len(rest) :]):
            (o if kind == "o" else r)[i] = v
        root_idx = [0] * len(coords)
        for a, v in zip(rest, t_idx):
            root_idx[a] = v
        for j, a in early.items():
            root_idx[a] = r[j]
        return root_idx, o, r

    stage1 = Reduction(
        f"{red.name}_rf",
        red.node,
        tuple(t_shape),
        tuple(red.extents[j] for j in early),
        Lazy.of(root),
        lambda t_idx, r_early: stage1_coords(t_idx, r_early)[0],
        red.weight,
        None if red.weight is None else (lambda t_idx, r_early: red.weight_index(*stage1_coords(t_idx, r_early)[1:])),
        red.combiner,
    )
    partial = _emit(stages, stage1)

    def stage2_index(o: Index, r_late: Index) -> Index:
        r = [0] * len(reds)
        for j, v in zip(late, r_late):
            r[j] = v
        full = red.operand.index(red.operand_index(o, r))
        return [full[a] for a in rest] + [(o if kind == "o" else r)[i] for kind, i, _ in carried]

    operand = Lazy(partial, tuple(pads[a] for a in rest) + ((0, 0),) * len(carried), tuple(t_shape), list)
    return replace(
        red,
        extents=tuple(red.extents[j] for j in late),
        operand=operand,
        operand_index=stage2_index,
        weight=None,
        weight_index=None,
    )
