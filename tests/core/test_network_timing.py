"""Two built networks timed in alternating rounds (core.networks.timing): every round times
each once, and a network doing 16x the work reads slower however the load moves."""

from __future__ import annotations

import torch
from torch import nn

from core.compile.target import local_target
from core.networks.relax_import import to_relax
from core.networks.schedules import compile_scheduled, fused, network_kernels, schedule_kernels
from core.networks.timing import alternating_timings, vm_of


def _vm(channels: int, tmp_path, example: torch.Tensor):
    model = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU()).eval()
    target = local_target(1)
    mod = to_relax(model, example, f"a conv to {channels} channels")
    scheduled = schedule_kernels(network_kernels(fused(mod), target), target, tmp_path / str(channels), 0)
    return vm_of(compile_scheduled(mod, target, scheduled.database))


def test_networks_are_timed_in_alternating_rounds(tmp_path):
    example = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    vms = {"small": _vm(4, tmp_path, example), "large": _vm(64, tmp_path, example)}
    timed = alternating_timings(vms, example, repeat=5, min_repeat_ms=2)
    assert set(timed) == {"small", "large"}
    assert all(len(t.runs_ms) == 5 and t.median_ms > 0 for t in timed.values())
    assert timed["large"].median_ms > timed["small"].median_ms
