"""Blending: primitives joining two tensors: Canvas's broadcast, and concat.

Broadcast's rule (Canvas): strip the common prefix and suffix of LHS and RHS; the size of
LHS's remaining middle must divide RHS's. RHS's middle is read as [L, M] with L
the LHS middle size: each LHS element is repeated over M consecutive RHS
elements. The output has RHS's shape."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ShapeError
from ..symbolic import Size, VarKind, kind_of
from ..tensor import Dim, TensorType
from .base import Param, Primitive

BINARY_OPS = ("add", "sub", "mul", "min", "max")


@dataclass(frozen=True)
class Match:
    """How LHS lines up with RHS: prefix/suffix lengths and middle sizes."""

    prefix: int
    lhs_suffix_start: int
    rhs_suffix_start: int
    lhs_mid: Size
    rhs_mid: Size

    @property
    def ratio(self) -> Size:
        return self.rhs_mid / self.lhs_mid


def match(lhs: TensorType, rhs: TensorType) -> Match:
    p = 0
    while p < min(len(lhs), len(rhs)) and lhs[p].size == rhs[p].size:
        p += 1
    s = 0
    while s < min(len(lhs), len(rhs)) - p and lhs[-1 - s].size == rhs[-1 - s].size:
        s += 1
    ls, rs = len(lhs) - s, len(rhs) - s
    return Match(p, ls, rs, _product(lhs[p:ls]), _product(rhs[p:rs]))


def _product(dims) -> Size:
    total = Size(1)
    for d in dims:
        total = total * d.size
    return total


class Broadcast(Primitive):
    op = "broadcast"
    title = "Broadcast"
    families = ("canvas",)
    category = "blending"
    doc = (
        "Combine LHS into RHS element-wise (add, sub, mul, min, max); LHS's unmatched middle "
        "axes must divide RHS's and are repeated to fill them. Output has RHS's shape."
    )
    ports = ("lhs", "rhs")
    spec = (Param("fn", "choice", "add", "The binary operation.", choices=BINARY_OPS),)

    def infer(self, inputs, kinds):
        lhs, rhs = inputs
        m = match(lhs, rhs)
        ratio = m.ratio
        primary = [v for v in ratio.divisor_blockers(kinds) if kind_of(v, kinds) is VarKind.PRIMARY]
        if primary or (ratio.is_constant() and ratio.coef.denominator != 1):
            raise ShapeError(f"LHS {lhs} does not divide RHS {rhs} (middle {m.lhs_mid} vs {m.rhs_mid}, ratio {ratio})")
        return rhs

    def integral(self, inputs, out):
        return [("RHS middle / LHS middle", match(*inputs).ratio)]

    def pending(self, inputs, kinds: Mapping[str, VarKind]) -> tuple[Match, list[str]]:
        """Dynamic variables that must still be chosen so that LHS divides RHS."""
        m = match(*inputs)
        return m, [v for v in m.ratio.divisor_blockers(kinds) if kind_of(v, kinds) is VarKind.DYNAMIC]


class Concat(Primitive):
    """Tessera's own: neither published family joins tensors end to end, but a peeled loop
    nest (NAS-PTE's sequences 2 and 3) computes its output channels in parts."""

    op = "concat"
    title = "Concat"
    families = ("tessera",)
    category = "blending"
    doc = (
        "Join A and B end to end along one axis: [..X..] and [..Y..] -> [..X+Y..], every other axis "
        "equal. X and Y must add up to one size: numbers, or like terms such as C/4 and 3*C/4."
    )
    ports = ("a", "b")
    spec = (Param("dim", "dim", 0, "The axis to join along."),)

    def infer(self, inputs, kinds):
        a, b = inputs
        if len(a) != len(b):
            raise ShapeError(f"A and B need the same number of axes: A {a} has {len(a)} axes, B {b} has {len(b)}")
        d = self.axis(a)
        for i, (x, y) in enumerate(zip(a, b)):
            if x.spatial != y.spatial:
                raise ShapeError(f"dim {i} is spatial in {'A' if x.spatial else 'B'} only (A {a}, B {b})", dim=i)
            if i != d and x.size != y.size:
                raise ShapeError(f"along dim {d}: A {a} and B {b} differ at dim {i} ({x.size} vs {y.size})", dim=i)
        x, y = a[d].size, b[d].size
        if x.powers != y.powers:
            raise ShapeError(
                f"along dim {d}: {x} + {y} is not one size (sizes are products of "
                "variables; join parts such as C/4 and 3*C/4, or numbers)",
                dim=d,
            )
        return a.replace(d, [Dim(Size(x.coef + y.coef, x.powers), a[d].spatial)])

    def flops(self, inputs, out):
        return Size(0)
