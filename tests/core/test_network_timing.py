"""Two built networks and their eager torch modules timed in the same interleaved rounds
(core.networks.timing): every round times each once, and a network doing 16x the work reads
slower however the load moves, in TVM and in eager PyTorch."""

from __future__ import annotations

import torch
from torch import nn

from core.compile.target import local_target
from core.networks.relax_import import to_relax
from core.networks.schedules import compile_scheduled, fused, network_kernels, schedule_kernels
from core.networks.timing import eager, paired_rounds, vm_of


def _model(channels: int) -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU()).eval()


def _vm(model: nn.Module, channels: int, tmp_path, example: torch.Tensor):
    target = local_target(1)
    mod = to_relax(model, example, f"a conv to {channels} channels")
    scheduled = schedule_kernels(network_kernels(fused(mod), target), target, tmp_path / str(channels), 0)
    return vm_of(compile_scheduled(mod, target, scheduled.database))


def test_networks_are_timed_in_interleaved_rounds(tmp_path):
    example = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    models = {"small": _model(4), "large": _model(64)}
    vms = {name: _vm(model, model[0].out_channels, tmp_path, example) for name, model in models.items()}
    rounds = paired_rounds(vms, models, example, repeat=6, min_repeat_ms=2, reference="large")
    assert set(rounds.runs_ms) == {"small", "large", eager("small"), eager("large")}
    assert len({len(runs) for runs in rounds.runs_ms.values()}) == 1 and len(rounds.runs_ms["small"]) >= 6
    assert rounds.latency_ms("large") > rounds.latency_ms("small") > 0
    speedup = rounds.speedup("small")
    assert speedup is not None and speedup.low is not None and 1 < speedup.low <= speedup.median
    in_torch = rounds.speedup(eager("small"), over=eager("large"))  # the same ratio, in eager PyTorch
    assert in_torch is not None and in_torch.low is not None and 1 < in_torch.low <= in_torch.median
