"""The figure the papers report: a network with the operator against the original network,
both with tuned kernels, timed in the same run with the same threads, at deployment size.

Both networks are built at the deployment size (DeploySettings: by default the backbone's
standard width at 32 px), from the same seed; without an operator, the "candidate" is the
backbone under the deployment's width multiplier (the original narrowed to a candidate's FLOPs,
the plain alternative a candidate is held against), the original the backbone at full width.
Each is imported into relax (the operator's layers as its own kernel,
core.networks.kernel_layers), its kernels are given schedules (core.networks.schedules: the
original network's are tuned once per device and reused by every candidate; the operator's
are transferred from its own tuning or tuned within the budget), it is built and checked
against torch. Then both builds and both eager PyTorch networks (what a user runs without TVM)
are timed in the same interleaved rounds (core.networks.timing), on the threads that are free,
so a load change while they run does not decide the speedup: the median of the per-round
ratios, with its 95% interval; each side's latency is its fastest round. The operator's
kernels are also timed inside the network, to compare with their time alone (the tuning
record's), which says whether the network runs them as tuned."""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from torch import nn
from tvm import relax

from ..compile.rounds import free_cores
from ..compile.target import core_count, local_target, timing_threads, use_threads
from ..compile.timing import timing_note
from ..compile.transfer_sources import Source
from ..compile.tune import tuning_root
from ..data.assignment import Assignment
from ..data.backbones import build_backbone
from ..data.conv_fit import Replacement
from ..data.swap_convs import replace_convs
from ..ir.graph import OperatorGraph
from .kernel_layers import use_kernels
from .relax_import import to_relax
from .results import EndToEnd, KernelSchedule, OperatorKernel
from .schedules import DATABASE, compile_scheduled, fused, network_kernels, schedule_kernels
from .settings import DeployError, DeploySettings
from .timing import check_network, eager, kernel_times, paired_rounds, vm_of

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class BuiltNetwork:
    """One network at deployment size, built by TVM with its schedules and checked against torch."""

    what: str  # its name in messages
    vm: relax.VirtualMachine
    kernels: list[KernelSchedule]
    max_abs_error: float


@dataclass(frozen=True)
class Networks:
    """The two networks timed against each other (the candidate before its convolutions are
    replaced), the example they run on, and their names in messages: a built-in backbone's
    (backbone_networks) or a user's own model's (core.networks.user_models)."""

    original: nn.Module
    candidate: nn.Module
    example: torch.Tensor
    original_label: str
    label: str  # the candidate's, e.g. 'resnet18/w64@32px'


def backbone_networks(deploy: DeploySettings) -> Networks:
    """The deployment's backbone at full width (the original) and at its width multiplier (the
    candidate), from the same seed."""
    spec, full = deploy.spec, replace(deploy, scale=1.0)
    return Networks(
        build_backbone(full.spec, deploy.num_classes, deploy.seed).eval(),
        build_backbone(spec, deploy.num_classes, deploy.seed).eval(),
        torch.randn(1, 3, spec.resolution, spec.resolution, generator=torch.Generator().manual_seed(0)),
        full.label,
        deploy.label,
    )


def tuned_end_to_end(
    stand_in: OperatorGraph | Assignment | None,
    deploy: DeploySettings,
    sources: Sequence[Source],
    root: Path | None = None,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
    networks: Networks | None = None,
) -> EndToEnd:
    """Both networks tuned and timed (this module's doc); `stand_in`: the operator in every
    layer it fits, an assignment's operators in the layers it names, or None (the candidate as
    it is). `networks`: two given ones (a user's model, core.networks.user_models) instead of
    the deployment's backbone_networks; deploy still gives the tuning budget and timing."""
    networks = networks or backbone_networks(deploy)
    threads = core_count()
    use_threads(threads)
    target = local_target(threads)
    folder = (root or tuning_root()) / "local" / DATABASE
    original, candidate, example = networks.original, networks.candidate, networks.example
    if stand_in is None:
        replacement, theirs = Replacement(networks.label, 0, ()), networks.label
    else:
        size = (int(example.shape[2]), int(example.shape[3]))
        report = replace_convs(candidate, stand_in, size, int(example.shape[1]), kinds=deploy.replace)
        if not report.replaced:
            reasons = sorted({o.detail for o in report.layers})
            raise DeployError(
                f"{report.operator} fits none of the convolutions of {networks.label}: {'; '.join(reasons)}"
            )
        replacement, theirs = report.record(), f"{networks.label} with {report.operator}"
    kernels = [] if stand_in is None else use_kernels(candidate, stand_in, report)
    built = {}
    for i, (name, model) in enumerate((("original", original), ("candidate", candidate))):
        check_cancelled()
        what = networks.original_label if name == "original" else theirs

        def step(fraction: float, message: str, i=i) -> None:
            progress(0.05 + 0.45 * (i + fraction), f"{'original' if i == 0 else 'candidate'}: {message}")

        built[name] = _build(model, example, what, target, folder, deploy, sources, step, check_cancelled)
    check_cancelled()
    progress(0.95, "timing both networks, in TVM and in eager PyTorch, in interleaved rounds")
    models = {"original": original, "candidate": candidate}
    with timing_threads(free_cores(threads)) as timed_on:
        vms = {n: b.vm for n, b in built.items()}
        rounds = paired_rounds(vms, models, example, deploy.repeat, deploy.min_repeat_ms, reference="original")
    speedup, in_torch = rounds.speedup("candidate"), rounds.speedup(eager("candidate"), over=eager("original"))
    assert speedup is not None and in_torch is not None  # there is a reference
    ours, base = built["candidate"], built["original"]
    inside = kernel_times(ours.vm, example, [k.name for k in kernels]) if kernels else {}
    progress(1.0, "done")
    alone = {k.kernel: k.latency_ms for k in ours.kernels}
    return EndToEnd(
        deploy=networks.label,
        threads=timed_on,
        load=os.getloadavg()[0],
        latency_ms=rounds.latency_ms("candidate"),
        latency_std_ms=statistics.stdev(rounds.runs_ms["candidate"]),
        baseline_latency_ms=rounds.latency_ms("original"),
        baseline_std_ms=statistics.stdev(rounds.runs_ms["original"]),
        torch_latency_ms=rounds.latency_ms(eager("candidate")),
        torch_baseline_ms=rounds.latency_ms(eager("original")),
        torch_speedup=in_torch.median,
        max_abs_error=ours.max_abs_error,
        timing_note=timing_note(speedup.doubt("the speedup over the original")),
        speedup=speedup.median,
        speedup_low=speedup.low,
        speedup_high=speedup.high,
        untuned_kernels=tuple(
            sorted({k.kernel for k in [*ours.kernels, *base.kernels] if k.source.startswith("untuned")})
        ),
        kernels=tuple(ours.kernels),
        baseline_kernels=tuple(base.kernels),
        operator_kernels=tuple(
            OperatorKernel(name, ms_, alone.get(name), ms_ / alone_ms if (alone_ms := alone.get(name)) else None)
            for name, ms_ in inside.items()
        ),
        replacement=replacement,
    )


def _build(model, example, what, target, folder, deploy, sources, progress, check_cancelled) -> BuiltNetwork:
    progress(0.0, "importing into TVM")
    mod = to_relax(model, example, what)
    kernels = network_kernels(fused(mod), target)
    scheduled = schedule_kernels(
        kernels,
        target,
        folder,
        deploy.trials,
        sources if deploy.transfer else (),
        deploy.top_k,
        deploy.cost_model,
        lambda fraction, message: progress(0.05 + 0.8 * fraction, message),
        check_cancelled,
    )
    check_cancelled()
    progress(0.9, "building and checking against torch")
    vm = vm_of(compile_scheduled(mod, target, scheduled.database))
    return BuiltNetwork(what, vm, scheduled.kernels, check_network(vm, model, example, what))
