"""Which backbone, how wide, at which resolution: the torch-free description of a network,
so the CLI and the GUI can check a request and label its results without importing torch."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import BackboneError

#: the networks core.data.backbones builds
BACKBONE_NAMES = ("resnet18", "resnet34", "vgg", "mobilenetv2")


@dataclass(frozen=True)
class BackboneSpec:
    """`width` is the channel count of the first stage; `resolution` the input's side in pixels."""

    name: str = "resnet18"
    width: int = 16
    resolution: int = 16

    def __post_init__(self):
        if self.name not in BACKBONE_NAMES:
            raise BackboneError(f"unknown backbone {self.name!r}; choose one of {', '.join(BACKBONE_NAMES)}")
        for what, value, low in (("width", self.width, 1), ("resolution", self.resolution, 8)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise BackboneError(f"{self.name}: {what} must be an integer >= {low}, got {value!r}")

    @property
    def label(self) -> str:
        """Name with its width, as scores record it: curves compare only like with like."""
        return f"{self.name}/w{self.width}"
