"""Backbone networks in plain torch (no torchvision), CIFAR-style and scalable.

ResNets take the stem their input size calls for, as the published ones do: CIFAR's 3x3
convolution without a max-pool below IMAGENET_STEM_FROM pixels, ImageNet's 7x7 stride-2
convolution and 3x3 stride-2 max-pool from there (at 224 px the first stage then runs at
56x56, as in the network users deploy, not at 224x224 with 15x its FLOPs).

`width` is the channel count of the first stage (64 for the published ResNets,
32 for MobileNetV2); every later stage scales with it, so width 8 at 16x16 pixels
trains an epoch of the digits in seconds on this CPU. A width multiplier (`scale`)
narrows every layer, each one's channels rounded on their own, so a narrowed network's
FLOPs follow the multiplier in small steps even at a small width. All nets end in adaptive
average pooling, so any resolution >= 8 works. Their standard convolutions are
plain nn.Conv2d modules, which core.data.swap_convs swaps for IR operators.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .errors import BackboneError
from .specs import BackboneSpec


def conv_bn(c_in: int, c_out: int, k: int = 3, stride: int = 1, groups: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(c_out)]


def _narrowed(channels: float, scale: float) -> int:
    """A layer's channels under the width multiplier `scale`, rounded on their own."""
    return max(1, round(channels * scale))


#: inputs at least this large (pixels a side) get ResNet's ImageNet stem
IMAGENET_STEM_FROM = 128


# -- ResNet (He et al.): CIFAR stem (3x3 conv, no max-pool) or ImageNet's (7x7/2 conv, max-pool) ----
class BasicBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.conv1, self.bn1 = conv_bn(c_in, c_out, 3, stride)
        self.conv2, self.bn2 = conv_bn(c_out, c_out, 3, 1)
        self.shortcut = (
            nn.Sequential(*conv_bn(c_in, c_out, 1, stride)) if stride != 1 or c_in != c_out else nn.Identity()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(
        self, blocks: tuple[int, ...], width: int, num_classes: int, scale: float = 1.0, imagenet_stem: bool = False
    ):
        super().__init__()
        c_in = _narrowed(width, scale)
        if imagenet_stem:
            self.stem = nn.Sequential(*conv_bn(3, c_in, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        else:
            self.stem = nn.Sequential(*conv_bn(3, c_in), nn.ReLU())
        layers = []
        for i, n in enumerate(blocks):
            c_out = _narrowed(width * 2**i, scale)
            for j in range(n):
                layers.append(BasicBlock(c_in, c_out, 2 if i > 0 and j == 0 else 1))
                c_in = c_out
        self.layers = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_in, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layers(self.stem(x)))


# -- VGG-style: VGG-11's eight 3x3 convs with three max-pools (not five), so 8x8 inputs work ----
class VGG(nn.Module):
    LAYOUT = (1, "M", 2, "M", 4, 4, "M", 8, 8, 8, 8)

    def __init__(self, width: int, num_classes: int, scale: float = 1.0):
        super().__init__()
        layers: list[nn.Module] = []
        c_in = 3
        for item in self.LAYOUT:
            if isinstance(item, str):  # "M"
                layers.append(nn.MaxPool2d(2))
            else:
                c_out = _narrowed(width * item, scale)
                layers += [*conv_bn(c_in, c_out), nn.ReLU()]
                c_in = c_out
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_in, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


# -- MobileNetV2 (Sandler et al.), CIFAR strides --------------------------------------------------
def _round8(c: float) -> int:
    """Channel counts rounded to a multiple of 8 (as MobileNetV2 does), never below 8."""
    return max(8, int(c + 4) // 8 * 8)


class InvertedResidual(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int, expand: int):
        super().__init__()
        hidden = c_in * expand
        layers = [*conv_bn(c_in, hidden, 1), nn.ReLU6()] if expand != 1 else []
        layers += [*conv_bn(hidden, hidden, 3, stride, groups=hidden), nn.ReLU6(), *conv_bn(hidden, c_out, 1)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and c_in == c_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    # (expansion t, channels at width 32, repeats n, stride s); CIFAR variant: strides 1 early
    SETTINGS = (
        (1, 16, 1, 1),
        (6, 24, 2, 1),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    )

    def __init__(self, width: int, num_classes: int, scale: float = 1.0):
        super().__init__()
        scale *= width / 32
        c_in = _round8(32 * scale)
        layers: list[nn.Module] = [*conv_bn(3, c_in), nn.ReLU6()]
        for t, c, n, s in self.SETTINGS:
            c_out = _round8(c * scale)
            for j in range(n):
                layers.append(InvertedResidual(c_in, c_out, s if j == 0 else 1, t))
                c_in = c_out
        last = _round8(1280 * scale)
        layers += [*conv_bn(c_in, last, 1), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(last, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


#: name -> (width, classes, width multiplier, input side in pixels) -> the network
BACKBONES: dict[str, Callable[[int, int, float, int], nn.Module]] = {
    "resnet18": lambda width, classes, scale, px: ResNet((2, 2, 2, 2), width, classes, scale, px >= IMAGENET_STEM_FROM),
    "resnet34": lambda width, classes, scale, px: ResNet((3, 4, 6, 3), width, classes, scale, px >= IMAGENET_STEM_FROM),
    "vgg": lambda width, classes, scale, px: VGG(width, classes, scale),
    "mobilenetv2": lambda width, classes, scale, px: MobileNetV2(width, classes, scale),
}


def build_backbone(spec: BackboneSpec, num_classes: int, seed: int | None = 0) -> nn.Module:
    """A freshly initialised backbone; the same seed gives the same weights (original and
    candidate networks start from the same draw wherever their layers coincide)."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise BackboneError(f"{spec.name}: the number of classes must be an integer >= 2, got {num_classes!r}")
    if seed is not None:
        torch.manual_seed(seed)
    return BACKBONES[spec.name](spec.width, num_classes, spec.scale, spec.resolution)
