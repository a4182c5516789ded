"""The figure the papers report: a network with the operator against the original network,
both with tuned kernels, timed in the same run with the same threads, at deployment size.

Both networks are built at the deployment size (DeploySettings: by default the backbone's
standard width at 32 px), from the same seed; without an operator, the "candidate" is the
backbone under the deployment's width multiplier (the original narrowed to a candidate's FLOPs,
the plain alternative a candidate is held against), the original the backbone at full width. PyTorch times both first (eager, a second
reference); then each is imported into relax (the operator's layers as its own kernel,
core.networks.kernel_layers), its kernels are given schedules (core.networks.schedules: the
original network's are tuned once per device and reused by every candidate; the operator's
are transferred from its own tuning or tuned within the budget), it is built and checked
against torch. Then both builds are timed in alternating rounds (core.networks.timing), so a
load change while they run does not decide the speedup. The operator's kernels are also timed
inside the network, to compare with their time alone (the tuning record's), which says whether
the network runs them as tuned."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from tvm import relax

from ..compile.target import core_count, local_target, use_threads
from ..compile.timing import timing_note
from ..compile.transfer_sources import Source
from ..compile.tune import tuning_root
from ..data.assignment import Assignment
from ..data.backbones import build_backbone
from ..data.replace import replace_convs
from ..data.replacement import Replacement
from ..ir.graph import OperatorGraph
from .kernel_layers import use_kernels
from .relax_import import to_relax
from .results import EndToEnd, KernelSchedule, OperatorKernel
from .schedules import DATABASE, compile_scheduled, fused, network_kernels, schedule_kernels
from .settings import DeployError, DeploySettings
from .timing import alternating_timings, busy_machine, check_network, kernel_times, torch_timing, vm_of

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class BuiltNetwork:
    """One network at deployment size, built by TVM with its schedules and checked against torch."""

    what: str  # its name in messages
    vm: relax.VirtualMachine
    kernels: list[KernelSchedule]
    max_abs_error: float


def tuned_end_to_end(
    stand_in: OperatorGraph | Assignment | None,
    deploy: DeploySettings,
    sources: Sequence[Source],
    root: Path | None = None,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
) -> EndToEnd:
    """Both networks tuned and timed (this module's doc); `stand_in`: the operator in every
    layer it fits, an assignment's operators in the layers it names, or None (the backbone as it
    is, at the deployment's width multiplier)."""
    threads = core_count()
    use_threads(threads)
    target = local_target(threads)
    folder = (root or tuning_root()) / "local" / DATABASE
    spec = deploy.spec
    full = replace(deploy, scale=1.0)
    original = build_backbone(full.spec, deploy.num_classes, deploy.seed).eval()
    candidate = build_backbone(spec, deploy.num_classes, deploy.seed).eval()
    if stand_in is None:
        replacement, theirs = Replacement(deploy.label, 0, ()), deploy.label
    else:
        report = replace_convs(candidate, stand_in, spec.resolution, kinds=spec.replace)
        if not report.replaced:
            reasons = sorted({o.detail for o in report.layers})
            raise DeployError(
                f"{report.operator} fits none of the convolutions of {deploy.label}: {'; '.join(reasons)}"
            )
        replacement, theirs = report.record(), f"{deploy.label} with {report.operator}"
    example = torch.randn(1, 3, spec.resolution, spec.resolution, generator=torch.Generator().manual_seed(0))
    progress(0.01, f"timing PyTorch's {full.label} and {theirs}")
    eager = {
        name: torch_timing(model, example, deploy.repeat, deploy.min_repeat_ms)
        for name, model in (("original", original), ("candidate", candidate))
    }
    kernels = [] if stand_in is None else use_kernels(candidate, stand_in, report)
    built = {}
    for i, (name, model) in enumerate((("original", original), ("candidate", candidate))):
        check_cancelled()
        what = full.label if name == "original" else theirs

        def step(fraction: float, message: str, i=i) -> None:
            progress(0.05 + 0.45 * (i + fraction), f"{'original' if i == 0 else 'candidate'}: {message}")

        built[name] = _build(model, example, what, target, folder, deploy, sources, step, check_cancelled)
    check_cancelled()
    progress(0.95, "timing both networks in alternating rounds")
    load = os.getloadavg()[0]
    timed = alternating_timings({n: b.vm for n, b in built.items()}, example, deploy.repeat, deploy.min_repeat_ms)
    busy = busy_machine(max(load, os.getloadavg()[0]))
    ours, base = built["candidate"], built["original"]
    inside = kernel_times(ours.vm, example, [k.name for k in kernels]) if kernels else {}
    progress(1.0, "done")
    alone = {k.kernel: k.latency_ms for k in ours.kernels}
    return EndToEnd(
        deploy=deploy.label,
        threads=threads,
        load=os.getloadavg()[0],
        latency_ms=timed["candidate"].median_ms,
        latency_std_ms=timed["candidate"].std_ms,
        baseline_latency_ms=timed["original"].median_ms,
        baseline_std_ms=timed["original"].std_ms,
        torch_latency_ms=eager["candidate"].median_ms,
        torch_baseline_ms=eager["original"].median_ms,
        torch_speedup=eager["original"].median_ms / eager["candidate"].median_ms,
        max_abs_error=ours.max_abs_error,
        timing_note=timing_note(*(timed[n].doubt(f"TVM's {b.what}") for n, b in built.items()), busy),
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
