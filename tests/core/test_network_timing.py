"""Two built networks timed in interleaved rounds (core.networks.timing): every round times
each once, and a network doing 16x the work reads slower however the load moves."""

from __future__ import annotations

import torch
from torch import nn

from core.compile.target import local_target
from core.networks.relax_import import to_relax
from core.networks.schedules import compile_scheduled, fused, network_kernels, schedule_kernels
from core.networks.timing import paired_rounds, vm_of


def _vm(channels: int, tmp_path, example: torch.Tensor):
    model = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU()).eval()
    target = local_target(1)
    mod = to_relax(model, example, f"a conv to {channels} channels")
    scheduled = schedule_kernels(network_kernels(fused(mod), target), target, tmp_path / str(channels), 0)
    return vm_of(compile_scheduled(mod, target, scheduled.database))


def test_networks_are_timed_in_interleaved_rounds(tmp_path):
    example = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    vms = {"small": _vm(4, tmp_path, example), "large": _vm(64, tmp_path, example)}
    rounds = paired_rounds(vms, example, repeat=6, min_repeat_ms=2, reference="large")
    assert set(rounds.runs_ms) == {"small", "large"}
    assert len(rounds.runs_ms["small"]) == len(rounds.runs_ms["large"]) >= 6
    assert rounds.latency_ms("large") > rounds.latency_ms("small") > 0
    speedup = rounds.speedup("small")
    assert speedup is not None and speedup.low is not None and 1 < speedup.low <= speedup.median
