"""Views: primitives that only move or replicate data (no arithmetic, no weights).

Rearrangements from Canvas (group, shift, unfold) and the coordinate-level
views of Syno (split, merge, shift, expand, unfold, stride), read top-down."""

from __future__ import annotations

from ..errors import ShapeError
from ..symbolic import Size
from ..tensor import Dim, TensorType
from .base import Param, Primitive, insert_before_spatial, require_divisible

_DIM = Param("dim", "dim", 0, "Axis the primitive acts on (negative counts from the end).")


class Group(Primitive):
    op = "group"
    title = "Group"
    families = ("canvas",)
    category = "rearrangement"
    doc = "Split axis X into G groups: [..X..] -> [..G, X/G..]. G = X gives one group per channel."
    spec = (_DIM, Param("G", "size", "G", "Number of groups (a size expression)."))

    def infer(self, inputs, kinds):
        (x,) = inputs
        d = self.axis(x)
        g = self.required_size("G")
        rest = require_divisible(x[d].size, g, kinds, f"group dim {d}")
        return x.replace(d, [Dim(g, x[d].spatial), Dim(rest, x[d].spatial)])

    def flops(self, inputs, out):
        return Size(0)


class Split(Primitive):
    op = "split"
    title = "Split"
    families = ("syno",)
    category = "view"
    doc = "Partition axis N into blocks of B: [..N..] -> [..N/B, B..] (Syno SPLIT, top-down)."
    spec = (_DIM, Param("B", "size", "s", "Block size (a size expression)."))

    def infer(self, inputs, kinds):
        (x,) = inputs
        d = self.axis(x)
        b = self.required_size("B")
        outer = require_divisible(x[d].size, b, kinds, f"split dim {d}")
        return x.replace(d, [Dim(outer, x[d].spatial), Dim(b, x[d].spatial)])

    def flops(self, inputs, out):
        return Size(0)


class Merge(Primitive):
    op = "merge"
    title = "Merge"
    families = ("syno",)
    category = "view"
    doc = "Flatten axis d and d+1 into one: [..A, B..] -> [..A*B..] (Syno MERGE, top-down)."
    spec = (_DIM,)

    def infer(self, inputs, kinds):
        (x,) = inputs
        d = self.axis(x)
        if d + 1 >= len(x):
            raise ShapeError(f"merge needs an axis after dim {d} in {x}", dim=d)
        return TensorType([*x[:d], Dim(x[d].size * x[d + 1].size, x[d].spatial or x[d + 1].spatial), *x[d + 2 :]])

    def flops(self, inputs, out):
        return Size(0)


class Shift(Primitive):
    op = "shift"
    title = "Shift"
    families = ("canvas", "syno")
    category = "rearrangement"
    doc = "Roll axis X cyclically by `amount` positions; the shape is unchanged."
    spec = (_DIM, Param("amount", "int", 1, "Positions to roll by (may be negative)."))

    def infer(self, inputs, kinds):
        (x,) = inputs
        self.axis(x)
        return x

    def flops(self, inputs, out):
        return Size(0)


class Expand(Primitive):
    op = "expand"
    title = "Expand"
    families = ("syno",)
    category = "view"
    doc = "Insert a new axis of the given size at position `dim` by repetition (Syno EXPAND)."
    spec = (_DIM, Param("size", "size", "C_out", "Size of the new axis."))

    def infer(self, inputs, kinds):
        (x,) = inputs
        d = self.params["dim"]
        if not -len(x) - 1 <= d <= len(x):
            raise ShapeError(f"dim={d} is out of range for inserting into {x}")
        d = d % (len(x) + 1)
        dims = list(x)
        dims.insert(d, Dim(self.required_size("size"), False))
        return TensorType(dims)

    def flops(self, inputs, out):
        return Size(0)


class Unfold(Primitive):
    op = "unfold"
    title = "Unfold"
    families = ("canvas", "syno")
    category = "rearrangement"
    doc = (
        "Sliding windows of K neighbours along a spatial axis become a new channel axis "
        "(zero padding keeps the spatial size): [C.., X..] -> [C.., K, X..]."
    )
    spec = (
        _DIM,
        Param(
            "K",
            "size",
            "K",
            "Window size (a size expression): an odd window is centred; an even one reaches one element further after than before.",
        ),
    )

    def infer(self, inputs, kinds):
        (x,) = inputs
        d = self.axis(x)
        if not x[d].spatial:
            raise ShapeError(f"unfold needs a spatial axis; dim {d} ({x[d].size}) of {x} is a channel axis", dim=d)
        return insert_before_spatial(x, Dim(self.required_size("K"), False))

    def flops(self, inputs, out):
        return Size(0)


class Stride(Primitive):
    op = "stride"
    title = "Stride"
    families = ("syno",)
    category = "view"
    doc = "Keep every S-th element of an axis: [..S*K..] -> [..K..] (Syno STRIDE)."
    spec = (_DIM, Param("S", "size", "s", "Stride (a size expression)."))

    def infer(self, inputs, kinds):
        (x,) = inputs
        d = self.axis(x)
        kept = require_divisible(x[d].size, self.required_size("S"), kinds, f"stride dim {d}")
        return x.replace(d, [Dim(kept, x[d].spatial)])

    def flops(self, inputs, out):
        return Size(0)
