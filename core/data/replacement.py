"""What replacing a backbone's convolutions by an operator did to each (core.data.replace
makes it), in a module without torch, so that job results can carry it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LayerOutcome:
    """One nn.Conv2d of the backbone: its shape, whether it was replaced, and how or why not."""

    name: str
    c_in: int
    c_out: int
    height: int
    width: int
    kernel: int
    replaced: bool
    detail: str  # how it was composed when replaced, why not otherwise

    def line(self) -> str:
        shape = f"{self.c_in}->{self.c_out} @{self.height}x{self.width} k{self.kernel}"
        return f"{'replaced' if self.replaced else 'kept':8} {self.name:28} {shape:24} {self.detail}"


@dataclass(frozen=True)
class Replacement:
    """What a job's result keeps of a replacement: the operator, how many convolutions it
    replaced, and every convolution's outcome."""

    operator: str
    replaced: int
    layers: tuple[LayerOutcome, ...]
