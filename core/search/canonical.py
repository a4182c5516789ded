"""Canonicalization rules (Syno): drop redundant chains as they are built.

Each rule is a small named function over a pair of neighbouring steps, read
top-down: `upper` runs first, then `lower`. A rule returns a reason string when
the pair is redundant (some other chain computes the same thing more simply),
else None. Add rules by appending to RULES; each is tested on its own. A rule must
lose no function: test_search_lossless enumerates every chain up to a few primitives with
the rules and without. A MERGE above a SPLIT is left to the coordinate rewrite
(core.search.coords), which applies Syno's divisibility condition."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from ..ir.tensor import TensorType
from .chain import Step

Rule = Callable[[Step, Step], str | None]


def expand_then_reduce(upper: Step, lower: Step) -> str | None:
    """Summing copies of a tensor is a scaling: EXPAND followed by REDUCE of that axis."""
    if upper.op == "expand" and lower.op == "reduce" and upper.get("dim") == lower.get("dim"):
        return "expand then reduce of the same axis only scales"
    return None


def split_then_merge(upper: Step, lower: Step) -> str | None:
    """SPLIT then MERGE of the same axis is the identity."""
    if upper.op == "split" and lower.op == "merge" and upper.get("dim") == lower.get("dim"):
        return "split then merge of the same axis is the identity"
    return None


def shifts_cancel(upper: Step, lower: Step) -> str | None:
    """Two opposite rolls of one axis are none. Two rolls the same way are a roll by 2, which
    no single step makes (a shift rolls by 1): that pair is the only way to reach it."""
    if (
        upper.op == "shift"
        and lower.op == "shift"
        and upper.get("dim") == lower.get("dim")
        and upper.get("amount") + lower.get("amount") == 0
    ):
        return "opposite shifts of the same axis cancel"
    return None


#: views, and the axes of their output they touch, counted from their `dim`
VIEW_AXES = {"shift": (0,), "stride": (0,), "merge": (0,), "split": (0, 1), "expand": (0,)}


def view_above_reduce(upper: Step, lower: Step) -> str | None:
    """Views are pushed below contractions: a view commutes with summing an axis it does not
    touch, so the canonical chain sums first. Syno's rule is for 1-to-1 views (a roll, a
    reshape); summing first before a 1-to-many view (expand; unfold in `unfold_reductions`)
    also sums fewer elements, where the other order makes the copies and then sums them
    (in training, a tensor as many times larger as the copies)."""
    if (
        upper.op in VIEW_AXES
        and lower.op == "reduce"
        and lower.get("dim") - upper.get("dim") not in VIEW_AXES[upper.op]
    ):
        return f"{upper.op} commutes with the reduce below it; canonical order reduces first"
    return None


def _reads_axis(step: Step, axis: int) -> bool:
    """Whether a step's result depends on how its input varies along `axis`."""
    if step.op == "share":
        return axis in step.get("dims")
    if step.op == "merge":
        return step.get("dim") in (axis - 1, axis)
    return step.get("dim") == axis


def expand_last(upper: Step, lower: Step) -> str | None:
    """Copies are made as late as possible: a step that does not read the axis an EXPAND
    adds (a view of another axis, a share whose weight does not span it) commutes with the
    expand, so the canonical chain runs it first, on a tensor as many times smaller as the
    copies. Otherwise training materialises the product of the copies with the weight
    (e.g. [N, C_out, C_in, H, W] for an expand of C_out above a share of C_in).
    Reduces below an expand: view_above_reduce and expand_then_reduce."""
    if upper.op == "expand" and lower.op not in ("reduce", "expand") and not _reads_axis(lower, upper.get("dim")):
        return f"{lower.op} does not read the expanded axis; canonical order expands after it"
    return None


def reduce_order(upper: Step, lower: Step) -> str | None:
    """Reduces commute: reduce(a) then reduce(b) with a > b equals reduce(b) then reduce(a-1)."""
    if upper.op == "reduce" and lower.op == "reduce" and upper.get("dim") > lower.get("dim"):
        return "consecutive reduces must sum axes in increasing order"
    return None


def unfold_reductions(steps_top_down: list[Step], spatial: list[bool]) -> str | None:
    """An UNFOLD output is reduced at most once: summing the spatial axis of windows just
    re-sums the input. And a reduce right below an unfold sums its window axis or goes
    first (view_above_reduce for the unfold: the windows of a sum are the sum of the
    windows, zero padding included). Axes move along the chain, so they are tracked by
    identity from the input's axes (`spatial` flags)."""
    axes = [(f"in{i}", sp) for i, sp in enumerate(spatial)]
    unfolded: set[str] = set()
    for k, s in enumerate(steps_top_down):
        op = s.op
        d = s.get("dim") if op not in ("share",) else None
        if op == "unfold":
            unfolded.add(axes[d][0])
            first = next((i for i, (_, sp) in enumerate(axes) if sp), len(axes))
            axes.insert(first, (f"window{k}", False))
        elif op == "reduce":
            if axes[d][0] in unfolded:
                return "the spatial axis of an unfold is reduced"
            if k and steps_top_down[k - 1].op == "unfold" and axes[d][0] != f"window{k - 1}":
                return "unfold commutes with the reduce below it; canonical order reduces first"
            del axes[d]
        elif op == "share" and s.get("out") not in (None, ""):
            axes.insert(0, (f"weight{k}", False))
        elif op in ("split", "merge", "expand"):
            tag, sp = axes[d] if d < len(axes) else (f"new{k}", False)
            if op == "split":
                axes[d : d + 1] = [(f"{tag}.o", sp), (f"{tag}.i", sp)]
            elif op == "merge":
                axes[d : d + 2] = [(f"merge{k}", sp or axes[d + 1][1])]
            else:
                axes.insert(d, (f"new{k}", False))
    return None


PAIR_RULES: list[Rule] = [
    expand_then_reduce,
    split_then_merge,
    shifts_cancel,
    view_above_reduce,
    expand_last,
    reduce_order,
]


def violation(upper: Step, lower: Step | None) -> str | None:
    """The first rule the pair breaks, or None; `lower` is None at the output end."""
    if lower is None:
        return None
    for rule in PAIR_RULES:
        reason = rule(upper, lower)
        if reason:
            return f"{rule.__name__}: {reason}"
    return None


def unfold_window_summed(upper: Step, lower: Step | None, before: TensorType) -> str | None:
    """The part of unfold_reductions a growing chain can check at each step, so that a chain
    bound to break it is never built (MCTS merges states by their function: a partial chain
    that breaks it only when complete would stand for one that does not): a reduce right
    below an UNFOLD sums the window axis, which sits just before the spatial axes of the
    unfold's input `before`."""
    if upper.op == "unfold" and lower is not None and lower.op == "reduce":
        window = before.spatial_dims[0] if before.spatial_dims else len(before)
        if lower.get("dim") != window:
            return "unfold_reductions: unfold commutes with the reduce below it; canonical order reduces first"
    return None


def chain_violation(steps_top_down: list[Step], spatial: list[bool]) -> str | None:
    """Every rule over a whole chain starting from an input with these spatial flags."""
    for upper, lower in itertools.pairwise(steps_top_down):
        reason = violation(upper, lower)
        if reason:
            return reason
    reason = unfold_reductions(steps_top_down, spatial)
    return f"unfold_reductions: {reason}" if reason else None
