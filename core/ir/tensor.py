"""Tensor types: ordered dimensions with symbolic sizes (batch N is implicit).

A dimension is either a channel dimension or a spatial one (H, W and what comes
from them); Canvas's rules (fc mixes channels only, no dynamic variable in a
spatial dimension) need the distinction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from .symbolic import Size


class Dim(NamedTuple):
    size: Size
    spatial: bool = False


class TensorType(tuple):
    """An immutable sequence of Dim."""

    def __new__(cls, dims=()):
        return super().__new__(cls, tuple(dims))

    @property
    def sizes(self) -> tuple[Size, ...]:
        return tuple(d.size for d in self)

    @property
    def channel_dims(self) -> list[int]:
        return [i for i, d in enumerate(self) if not d.spatial]

    @property
    def spatial_dims(self) -> list[int]:
        return [i for i, d in enumerate(self) if d.spatial]

    def numel(self) -> Size:
        total = Size(1)
        for d in self:
            total = total * d.size
        return total

    def replace(self, index: int, new_dims) -> TensorType:
        dims = list(self)
        dims[index : index + 1] = list(new_dims)
        return TensorType(dims)

    def concrete(self, bindings: Mapping[str, int]) -> tuple[int, ...]:
        return tuple(d.size.to_int(bindings) for d in self)

    def __str__(self) -> str:
        return "[" + ", ".join(str(d.size) for d in self) + "]"
