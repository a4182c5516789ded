"""Which backbone, how wide, at which resolution, and which of its convolutions an operator
stands in for: the torch-free description of a network, so the CLI and the GUI can check a
request and label its results without importing torch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import BackboneError

#: the networks core.data.backbones builds
BACKBONE_NAMES = ("resnet18", "resnet34", "vgg", "mobilenetv2")

#: the kinds of convolution an operator [C_in, H, W] -> [C_out, H, W] can stand in for
#: (core.data.swap_convs); a 1x1 convolution of stride 2 is both pointwise and strided
REPLACE_KINDS = {
    "standard": "KxK convolutions (K > 1) of stride 1: the operator at the layer's sizes",
    "pointwise": "1x1 convolutions: the operator with its window size K bound to 1",
    "strided": "convolutions of stride s > 1: every s-th row and column of the input, then the operator",
}
DEFAULT_REPLACE = ("standard", "pointwise")  # every stride-1 convolution, as before strided ones could be


def replace_kinds(value: str | Iterable[str]) -> tuple[str, ...]:
    """Kinds of REPLACE_KINDS from a list or a comma-separated text, in REPLACE_KINDS' order;
    BackboneError naming an unknown one."""
    names = [v.strip() for v in value.split(",")] if isinstance(value, str) else list(value)
    unknown = [n for n in names if n not in REPLACE_KINDS]
    if unknown or not names:
        raise BackboneError(
            f"convolutions to replace must be some of {', '.join(REPLACE_KINDS)}, got {','.join(map(str, names))!r}"
        )
    return tuple(k for k in REPLACE_KINDS if k in names)


@dataclass(frozen=True)
class BackboneSpec:
    """`width` is the channel count of the first stage; `resolution` the input's side in pixels;
    `replace` the kinds of convolution (REPLACE_KINDS) an operator stands in for; `scale` a
    width multiplier: every layer's channels times it, rounded (the network narrowed the plain
    way, core.train.flops finds the one that computes a candidate's FLOPs)."""

    name: str = "resnet18"
    width: int = 16
    resolution: int = 16
    replace: tuple[str, ...] = DEFAULT_REPLACE
    scale: float = 1.0

    def __post_init__(self):
        if self.name not in BACKBONE_NAMES:
            raise BackboneError(f"unknown backbone {self.name!r}; choose one of {', '.join(BACKBONE_NAMES)}")
        for what, value, low in (("width", self.width, 1), ("resolution", self.resolution, 8)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise BackboneError(f"{self.name}: {what} must be an integer >= {low}, got {value!r}")
        if isinstance(self.scale, bool) or not isinstance(self.scale, (int, float)) or not 0 < self.scale <= 1:
            raise BackboneError(f"{self.name}: the width multiplier must be a number in (0, 1], got {self.scale!r}")
        object.__setattr__(self, "replace", replace_kinds(self.replace))  # a list read from JSON as well

    @property
    def label(self) -> str:
        """Name with its width (and multiplier), and the convolutions replaced unless they are
        the default ones, as scores record it: curves compare only like with like."""
        replaced = "" if self.replace == DEFAULT_REPLACE else f"[{','.join(self.replace)}]"
        narrowed = "" if self.scale == 1 else f"x{self.scale:.3g}"
        return f"{self.name}/w{self.width}{narrowed}{replaced}"
