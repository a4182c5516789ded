"""View primitives lowered to index remappings (docs/operators.md's primitives table, read bottom-up).

Each lowering maps a planned step and the lazy tensor it reads to a new lazy
tensor. Shift rolls the root (a roll stage) and unfold pads it (a pad stage);
where the axis does not reach the root one-to-one, the view below is
materialised first. TE axis 0 is the batch, so IR axis d is TE axis d + 1."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tvm import tirx

from ..analysis.indexing import expand_view, merge_view, one_to_one, split_view, stride_view, unfold_view
from ..ir.primitives import Expand, Group, Merge, Shift, Split, Stride, Unfold
from .torch_plan import Step
from .tvm_lazy import Lazy, Stages, coord


def _te_shape(lazy: Lazy, step: Step) -> tuple[int, ...]:
    return (lazy.shape[0], *step.out_shape)


def _reshape_split(stages: Stages, step: Step, x: Lazy, name: str) -> Lazy:
    """[..X..] -> [..X/B, B..]: element (i, j) is x[i * B + j] (group and split)."""
    d = step.prim.axis(step.ins[0]) + 1
    return x.view(_te_shape(x, step), split_view(d, step.out_shape[d]))


def _merge(stages: Stages, step: Step, x: Lazy, name: str) -> Lazy:
    """[..A, B..] -> [..A*B..]: element i is x[i // B, i % B]."""
    d = step.prim.axis(step.ins[0]) + 1
    return x.view(_te_shape(x, step), merge_view(d, step.in_shapes[0][d], tirx))


def _shift(stages: Stages, step: Step, x: Lazy, name: str) -> Lazy:
    """torch.roll: element i is x[(i - amount) mod X]. The axis reads one root axis one-to-one
    (else x is materialised first), so the same view of the root rolled along that axis is the
    result: no modulo enters the index arithmetic of the views (see core.codegen.tvm_lazy)."""
    d = step.prim.axis(step.ins[0]) + 1
    offset = -step.prim.params["amount"] % step.in_shapes[0][d - 1]
    if offset == 0:
        return x
    root_axis = _pass_through(x, d)
    if root_axis is None:
        x = Lazy.of(stages.materialise(x, f"{name}_src", f"{step.prim.op} {step.node}"))
        root_axis = d
    return replace(x, root=stages.rolled(x.root, root_axis, offset))


def _expand(stages: Stages, step: Step, x: Lazy, name: str) -> Lazy:
    """A new axis whose every position repeats x."""
    d = step.prim.params["dim"] % (len(step.ins[0]) + 1) + 1
    return x.view(_te_shape(x, step), expand_view(d))


def _stride(stages: Stages, step: Step, x: Lazy, name: str) -> Lazy:
    """Element i is x[S * i]."""
    d = step.prim.axis(step.ins[0]) + 1
    s = step.in_shapes[0][d - 1] // step.out_shape[d - 1]
    return x.view(_te_shape(x, step), stride_view(d, s))


def _unfold(stages: Stages, step: Step, x: Lazy, name: str) -> Lazy:
    """Window k at position i reads x[i + k - K//2], zero outside; the window axis is placed
    before the first spatial axis. The zeros become padding of the root axis that the unfolded
    axis passes through to; when it passes through to none, x is materialised first."""
    d = step.prim.axis(step.ins[0]) + 1
    k_axis = step.ins[0].spatial_dims[0] + 1
    k = step.out_shape[k_axis - 1]
    root_axis = _pass_through(x, d)
    if root_axis is None:
        x = Lazy.of(stages.materialise(x, f"{name}_src", f"{step.prim.op} {step.node}"))
        root_axis = d
    pads = list(x.pads)
    pads[root_axis] = (k // 2, k - 1 - k // 2)
    return Lazy(x.root, tuple(pads), x.shape, x.index).view(_te_shape(x, step), unfold_view(d, k_axis, k))


def _pass_through(x: Lazy, axis: int) -> int | None:
    """The root axis that `axis` of x reads one-to-one (same extent, not yet padded, its
    coordinate is exactly this axis's index and no other coordinate uses it), else None."""
    axes, coords = x.coordinates()
    pads = [p != (0, 0) for p in x.pads]
    root = [int(s) for s in x.root.shape]
    return one_to_one([coord(c) for c in coords], axes[axis].name, root, x.shape[axis], pads)


VIEWS: dict[type, Callable[[Stages, Step, Lazy, str], Lazy]] = {
    Group: _reshape_split,
    Split: _reshape_split,
    Merge: _merge,
    Shift: _shift,
    Expand: _expand,
    Stride: _stride,
    Unfold: _unfold,
}
