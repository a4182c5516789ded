"""Index arithmetic shared by TVM code generation and the cost model.

The kernel's stages read their operands at coordinates built from output and reduction
variables through views (split, merge, unfold, ...). Whether a reduction can be staged
(core.analysis.staging) depends only on which coordinates are exactly one variable and
which variables each coordinate uses. The functions here build coordinates from either
kind of expression: TVM's (with `ops` the tvm.tirx module) or `Coord`, the pure-Python
stand-in the cost model uses (with `ops` = PURE). Coord folds constants exactly where
TVM's expression constructors do (x * 1, x + 0, x // 1, x % 1), so both read the same
structure off the same operator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from types import SimpleNamespace
from typing import Any


@dataclass(frozen=True)
class Coord:
    """An index expression: exactly the variable `var`, or (var None) a compound of `uses`."""

    var: str | None
    uses: frozenset[str]

    @classmethod
    def variable(cls, name: str) -> Coord:
        return cls(name, frozenset((name,)))

    def _with(self, other) -> Coord:
        return Coord(None, self.uses | (other.uses if isinstance(other, Coord) else frozenset()))

    def __add__(self, other):
        return self if isinstance(other, int) and other == 0 else self._with(other)

    __radd__ = __add__

    def __sub__(self, other):
        return self if isinstance(other, int) and other == 0 else self._with(other)

    def __mul__(self, other):
        if isinstance(other, int) and other in (0, 1):
            return self if other == 1 else 0
        return self._with(other)

    __rmul__ = __mul__


def _floordiv(a, b: int):
    if isinstance(a, int):
        return a // b
    return a if b == 1 else a._with(b)


def _floormod(a, b: int):
    if isinstance(a, int):
        return a % b
    return 0 if b == 1 else a._with(b)


def as_coord(c) -> Coord:
    """A coordinate as a Coord (a folded constant uses no variable)."""
    return c if isinstance(c, Coord) else Coord(None, frozenset())


def one_to_one(
    coords: Sequence[Coord], name: str, root: Sequence[int], extent: int, padded: Sequence[bool]
) -> int | None:
    """The root axis variable `name` indexes one-to-one: its coordinate is exactly `name`, no
    other coordinate uses it, the axis has `extent` elements and no padding; else None."""
    hits = [a for a, c in enumerate(coords) if c.var == name]
    if len(hits) != 1 or sum(name in c.uses for c in coords) != 1:
        return None
    a = hits[0]
    return a if root[a] == extent and not padded[a] else None


PURE = SimpleNamespace(floordiv=_floordiv, floormod=_floormod)  # the `ops` of Coord expressions

Index = list  # one expression per axis, batch first


def flatten(index: Sequence, sizes: Sequence[int]):
    """Row-major position of `index` in an array of `sizes`."""
    flat: Any = 0
    for i, s in zip(index, sizes):
        flat = flat * s + i
    return flat


def unflatten(flat, sizes: Sequence[int], ops) -> list:
    """Row-major coordinates of position `flat` in an array of `sizes`."""
    coords, stride = [], prod(sizes)
    for k, s in enumerate(sizes):
        stride //= s
        v = ops.floordiv(flat, stride) if stride > 1 else flat
        coords.append(ops.floormod(v, s) if k > 0 else v)
    return coords


def split_axes(ndim: int, removed_in_turn: Sequence[int]) -> tuple[list[int], list[int]]:
    """Axes kept and axes removed when axes are removed one after another by position."""
    positions = list(range(ndim))
    removed = [positions.pop(d) for d in removed_in_turn]
    return positions, removed


def place(ndim: int, kept: list[int], o: Index, removed: list[int], r: Index) -> Index:
    idx: Index = [0] * ndim
    for a, v in zip(kept, o):
        idx[a] = v
    for a, v in zip(removed, r):
        idx[a] = v
    return idx


@dataclass(frozen=True)
class Indexes:
    """A reduction's extents and where it reads: operand(o, r) and weight(o, r) coordinates."""

    extents: tuple[int, ...]
    operand: Callable[[Index, Index], Index]
    weight: Callable[[Index, Index], Index] | None = None


def axes_reduction(shape: Sequence[int], removed_in_turn: Sequence[int]) -> Indexes:
    """A sum (or max) over axes of the operand removed one after another (reduce chains, fold,
    softmax's reductions); TE axes, batch first."""
    kept, removed = split_axes(len(shape), removed_in_turn)
    return Indexes(tuple(shape[a] for a in removed), lambda o, r: place(len(shape), kept, o, removed, r))


def share_reduction(shape: Sequence[int], out: int | None, reduced: Sequence[int], shared: Sequence[int]) -> Indexes:
    """y[o, idx] = x[idx] * w[o, idx[shared]] summed over the `reduced` axes (IR axes of the share's
    output, in turn): x's TE `shape`, `out` the weight's leading axis (None: no such axis)."""
    lead = 0 if out is None else 1
    full = [shape[0], *([] if out is None else [out]), *shape[1:]]  # the share's output, TE axes
    kept, removed = split_axes(len(full), [d + 1 for d in reduced])
    weight_axes = [*([1] if lead else []), *(d + 1 + lead for d in shared)]

    def axes(o, r):
        return place(len(full), kept, o, removed, r)

    return Indexes(
        tuple(full[a] for a in removed),
        lambda o, r: [a for i, a in enumerate(axes(o, r)) if i == 0 or i > lead],
        lambda o, r: [axes(o, r)[a] for a in weight_axes],
    )


def fc_reduction(
    shape: Sequence[int], channels: list[int], spatial: list[int], weight: tuple[int, int], ops
) -> Indexes:
    """fc: the channel axes (TE) flattened in order to P; weight [out, P/groups]; output o reads
    block o // (out/groups)."""
    sizes = [shape[a] for a in channels]
    out, block = weight
    per_group = out // (prod(sizes) // block)
    extents, channel_index = block_reduction(sizes, block, ops)

    def x_index(o, r):
        idx: Index = [0] * len(shape)
        idx[0] = o[0]
        for a, v in zip(channels, channel_index(ops.floordiv(o[1], per_group), r)):
            idx[a] = v
        for a, v in zip(spatial, o[2:]):
            idx[a] = v
        return idx

    return Indexes(extents, x_index, lambda o, r: [o[1], flatten(r, extents)])


def block_reduction(sizes: list[int], block: int, ops) -> tuple[tuple[int, ...], Callable]:
    """An fc's reduction over one block of `block` consecutive flattened channels: its extents,
    and index(group, r) -> channel coordinates: trailing axes whole, at most one axis cut,
    so indices stay affine (a conv's C, K_h, K_w), else one flat axis."""
    rest, j = block, len(sizes)
    while j > 0 and rest % sizes[j - 1] == 0:
        rest //= sizes[j - 1]
        j -= 1
    if rest == 1:  # axes j.. whole; the group picks the leading axes
        return tuple(sizes[j:]), lambda group, r: [*unflatten(group, sizes[:j], ops), *r]
    if j > 0 and sizes[j - 1] % rest == 0:  # axis j-1 cut into (outer from the group, `rest` reduced)
        outer = [*sizes[: j - 1], sizes[j - 1] // rest]

        def cut(group, r):
            g = unflatten(group, outer, ops)
            return [*g[:-1], g[-1] * rest + r[0], *r[1:]]

        return (rest, *sizes[j:]), cut
    return (block,), lambda group, r: unflatten(group * block + r[0], sizes, ops)


# -- views: each maps an index of the view to an index of the tensor it reads (TE axes) ----------
def split_view(d: int, inner: int) -> Callable[[Index], Index]:
    """[..X..] -> [..X/B, B..]: element (i, j) is x[i * B + j] (group and split)."""
    return lambda idx: [*idx[:d], idx[d] * inner + idx[d + 1], *idx[d + 2 :]]


def merge_view(d: int, b: int, ops) -> Callable[[Index], Index]:
    """[..A, B..] -> [..A*B..]: element i is x[i // B, i % B]."""
    return lambda idx: [*idx[:d], ops.floordiv(idx[d], b), ops.floormod(idx[d], b), *idx[d + 1 :]]


def expand_view(d: int) -> Callable[[Index], Index]:
    """A new axis whose every position repeats x."""
    return lambda idx: [*idx[:d], *idx[d + 1 :]]


def stride_view(d: int, s: int) -> Callable[[Index], Index]:
    """Element i is x[S * i]."""
    return lambda idx: [*idx[:d], idx[d] * s, *idx[d + 1 :]]


def unfold_view(d: int, k_axis: int, k: int) -> Callable[[Index], Index]:
    """Window k at position i reads x[i + k - K//2]; the window axis sits at `k_axis`."""

    def remap(idx):
        window, rest = idx[k_axis], [*idx[:k_axis], *idx[k_axis + 1 :]]
        rest[d] = rest[d] + window - k // 2
        return rest

    return remap
