"""A small network holding the convolutions real models hold, for replacing them: stride 2 and
1x1, grouped and depthwise, dilated, with and without bias, 3 to 512 channels, and a head
module called at two resolutions. `build()` is what `--model tests/core/conv_zoo.py:build` names."""

from __future__ import annotations

import torch
from torch import nn


class ConvZoo(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)  # stride 2, bias
        self.point = nn.Conv2d(16, 32, 1, bias=False)  # 1x1
        self.grouped = nn.Conv2d(32, 32, 3, padding=1, groups=4, bias=False)
        self.depthwise = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.dilated = nn.Conv2d(32, 32, 3, padding=2, dilation=2, bias=False)
        self.body = nn.Conv2d(32, 64, 3, padding=1)
        self.norm = nn.BatchNorm2d(64)
        self.down = nn.Conv2d(64, 64, 3, stride=2, padding=1, bias=False)
        self.wide = nn.Conv2d(64, 512, 1, bias=False)  # 512 channels, on a small map
        self.head = nn.Conv2d(512, 64, 3, padding=1)  # shared: called at two resolutions
        self.fc = nn.Linear(128, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.point(self.stem(x)))
        x = self.dilated(self.depthwise(self.grouped(x)))
        x = self.down(torch.relu(self.norm(self.body(x))))
        x = self.wide(nn.functional.adaptive_avg_pool2d(x, 4))
        fine, coarse = self.head(x), self.head(nn.functional.avg_pool2d(x, 2))
        return self.fc(torch.cat([fine.mean((2, 3)), coarse.mean((2, 3))], 1))


def build() -> nn.Module:
    return ConvZoo()


def tiny() -> nn.Module:
    """Two 3x3 convolutions and a classifier: few enough kernels for a test that tunes the whole
    network for real (`--model tests/core/conv_zoo.py:tiny`)."""
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, 10),
    )
