"""How a reduction is staged in the kernel and what each stage costs (Syno's rfactor and
reduction orders), decided once for TVM code generation and the cost model alike.

A reduction reads an operand, through views, at root coordinates built from output
variables o0.. and reduction variables r0.. (core.analysis.indexing). A reduction variable
that indexes one root axis one-to-one (C_in below an unfold) can be summed on the root
first, before the one-to-many view replicates the partial sums:
`y[h] = sum_{c,k} x[c, h + k]` becomes `t[h'] = sum_c x[c, h']`, `y[h] = sum_k t[h + k]`
(C*K*H -> C*H + K*H). Which eligible variables go first is a choice (Syno enumerates these
reduction orders): the weight multiplies in the first stage when it reads one of them,
else in the second, after the sums it does not depend on, and the two differ in work.
`plan` tries every choice and keeps the one with the fewest FLOPs, one stage on a tie.

FLOPs of a stage: 2 per term (multiply, accumulate) with a weight, 1 per term without
(accumulate, as a reduce or fold counts); a stage with no reduction axes multiplies by the
weight (1 per element) or, without one, is a view of the first stage (no stage, no work)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import prod

from .indexing import Coord, one_to_one


@dataclass(frozen=True)
class Reduction:
    """out[o] = combine_r operand[root coordinates(o, r)] (* weight[weight index(o, r)])."""

    shape: tuple[int, ...]  # output, batch first
    extents: tuple[int, ...]  # one per reduction variable r0, r1, ...
    root: tuple[int, ...]  # the operand's root tensor, before padding
    padded: tuple[bool, ...]  # per root axis: zeros around it (from unfold)
    coords: tuple[Coord, ...]  # per root axis, in terms of o<i> and r<j>
    weight: frozenset[str] | None = None  # variables the weight's index uses; None: no weight


@dataclass(frozen=True)
class Stage:
    shape: tuple[int, ...]
    extents: tuple[int, ...]
    weighted: bool

    @property
    def flops(self) -> int:
        if not self.extents:
            return prod(self.shape) if self.weighted else 0
        return prod(self.shape) * prod(self.extents) * (2 if self.weighted else 1)

    @property
    def macs(self) -> int:
        return prod(self.shape) * prod(self.extents) if self.weighted else 0


@dataclass(frozen=True)
class Staging:
    """One stage (`early` empty), or stage 1 summing `early` on the root into
    t[rest root axes..., carried variables...] and stage 2 reading t through the views."""

    stages: tuple[Stage, ...]
    early: tuple[int, ...] = ()  # reduction variables of stage 1
    rest: tuple[int, ...] = ()  # root axes that index t
    carried: tuple[str, ...] = ()  # weight variables stage 1 keeps as t's last axes
    weight_first: bool = False  # the weight multiplies in stage 1 (else in stage 2)

    @property
    def flops(self) -> int:
        return sum(s.flops for s in self.stages)

    @property
    def macs(self) -> int:
        return sum(s.macs for s in self.stages)


def _extent(red: Reduction, name: str) -> int:
    """The extent of variable o<i> or r<j>."""
    return (red.shape if name[0] == "o" else red.extents)[int(name[1:])]


def plan(red: Reduction) -> Staging:
    """The staging with the fewest FLOPs (see the module docstring)."""
    best = Staging((Stage(red.shape, red.extents, red.weight is not None),))
    eligible = _eligible(red)
    for n in range(len(eligible), 0, -1):
        for early in combinations(eligible, n):
            staged = _split(red, early)
            if staged is not None and staged.flops < best.flops:
                best = staged
    return best


def _eligible(red: Reduction) -> list[int]:
    """The reduction variables that alone index a root axis, one-to-one and unpadded."""
    return [
        j for j, e in enumerate(red.extents) if one_to_one(red.coords, f"r{j}", red.root, e, red.padded) is not None
    ]


def _split(red: Reduction, early: tuple[int, ...]) -> Staging | None:
    """Stage 1 over `early`, or None when the weight ties a variable it keeps to the views."""
    taken = {a for a, c in enumerate(red.coords) if c.var in {f"r{j}" for j in early}}
    rest = tuple(a for a in range(len(red.root)) if a not in taken)
    rest_vars = set().union(*(red.coords[a].uses for a in rest))
    first = red.weight is not None and any(f"r{j}" in red.weight for j in early)
    carried: tuple[str, ...] = ()
    if first:
        names = [f"o{i}" for i in range(len(red.shape))] + [f"r{j}" for j in range(len(red.extents)) if j not in early]
        carried = tuple(v for v in names if v in (red.weight or ()))
        if rest_vars & set(carried):
            return None
    late = tuple(e for j, e in enumerate(red.extents) if j not in early)
    t_shape = (*(red.root[a] for a in rest), *(_extent(red, v) for v in carried))
    stage1 = Stage(t_shape, tuple(red.extents[j] for j in early), first)
    stage2 = Stage(red.shape, late, red.weight is not None and not first)
    return Staging((stage1, stage2), early, rest, carried, first)
