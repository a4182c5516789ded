"""Blending: Canvas's broadcast, the one primitive joining two tensors.

Rule (Canvas): strip the common prefix and suffix of LHS and RHS; the size of
LHS's remaining middle must divide RHS's. RHS's middle is read as [L, M] with L
the LHS middle size: each LHS element is repeated over M consecutive RHS
elements. The output has RHS's shape."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..errors import ShapeError
from ..symbolic import Size, VarKind, kind_of
from ..tensor import TensorType
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
    doc = ("Combine LHS into RHS element-wise (add, sub, mul, min, max); LHS's unmatched middle "
           "axes must divide RHS's and are repeated to fill them. Output has RHS's shape.")
    ports = ("lhs", "rhs")
    spec = (Param("fn", "choice", "add", "The binary operation.", choices=BINARY_OPS),)

    def infer(self, inputs, kinds):
        lhs, rhs = inputs
        m = match(lhs, rhs)
        ratio = m.ratio
        primary = [v for v in ratio.divisor_blockers(kinds) if kind_of(v, kinds) is VarKind.PRIMARY]
        if primary or (ratio.is_constant() and ratio.coef.denominator != 1):
            raise ShapeError(f"LHS {lhs} does not divide RHS {rhs} "
                             f"(middle {m.lhs_mid} vs {m.rhs_mid}, ratio {ratio})")
        return rhs

    def integral(self, inputs, out):
        return [("RHS middle / LHS middle", match(*inputs).ratio)]

    def pending(self, inputs, kinds: Mapping[str, VarKind]) -> tuple[Match, list[str]]:
        """Dynamic variables that must still be chosen so that LHS divides RHS."""
        m = match(*inputs)
        return m, [v for v in m.ratio.divisor_blockers(kinds) if kind_of(v, kinds) is VarKind.DYNAMIC]
