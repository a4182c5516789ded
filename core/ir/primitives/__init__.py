"""The primitive registry: op name -> class, for both published families and Tessera's own."""

from __future__ import annotations

from core.errors import shown

from ..errors import ParamError
from .arithmetic import UNARY_OPS, ElementWise, Fold, FullyConnected, Reduce, Share, Softmax
from .base import Param, Primitive
from .blending import BINARY_OPS, Broadcast, Concat
from .views import Expand, Group, Merge, Shift, Split, Stride, Unfold

REGISTRY: dict[str, type[Primitive]] = {
    cls.op: cls
    for cls in (
        Group,
        Shift,
        Unfold,
        FullyConnected,
        ElementWise,
        Fold,
        Softmax,
        Broadcast,
        Split,
        Merge,
        Expand,
        Stride,
        Reduce,
        Share,
        Concat,
    )
}


def make(op: str, params: dict | None = None) -> Primitive:
    try:
        cls = REGISTRY[op]
    except KeyError:
        raise ParamError(f"unknown primitive {shown(op)} (known: {', '.join(sorted(REGISTRY))})") from None
    return cls(params)


def family(name: str) -> list[type[Primitive]]:
    return [cls for cls in REGISTRY.values() if name in cls.families]


__all__ = [
    "BINARY_OPS",
    "REGISTRY",
    "UNARY_OPS",
    "Broadcast",
    "Concat",
    "ElementWise",
    "Expand",
    "Fold",
    "FullyConnected",
    "Group",
    "Merge",
    "Param",
    "Primitive",
    "Reduce",
    "Share",
    "Shift",
    "Softmax",
    "Split",
    "Stride",
    "Unfold",
    "family",
    "make",
]
