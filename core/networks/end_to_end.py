"""The figure the papers report: a network with the operator against the original network,
both with tuned kernels, timed in the same run with the same threads, at deployment size.

Both networks are built at the deployment size (DeploySettings: by default the backbone's
standard width at 32 px), from the same seed. PyTorch times both first (eager, a second
reference); then each is imported into relax (the operator's layers as its own kernel,
core.networks.kernel_layers), its kernels are given schedules (core.networks.schedules: the
original network's are tuned once per device and reused by every candidate; the operator's
are transferred from its own tuning or tuned within the budget), it is built, checked against
torch and timed. The operator's kernels are also timed inside the network, to compare with
their time alone (the tuning record's), which says whether the network runs them as tuned."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from ..compile.target import core_count, local_target, use_threads
from ..compile.timing import timing_note
from ..compile.transfer_sources import Source
from ..compile.tune import tuning_root
from ..data.assignment import Assignment
from ..data.backbones import build_backbone
from ..data.replace import replace_convs
from ..ir.graph import OperatorGraph
from .kernel_layers import use_kernels
from .relax_import import to_relax
from .results import EndToEnd, KernelSchedule, OperatorKernel
from .schedules import DATABASE, compile_scheduled, fused, network_kernels, schedule_kernels
from .settings import DeployError, DeploySettings
from .timing import busy_machine, check_network, kernel_times, torch_timing, vm_of, vm_timing

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class NetworkRun:
    """One network at deployment size: TVM's latency with its schedules, torch's, the check."""

    latency_ms: float
    latency_std_ms: float
    torch_ms: float
    max_abs_error: float
    kernels: list[KernelSchedule]
    kernel_ms: dict[str, float]  # the operator's kernels inside the network (empty for the original)
    doubt: str  # why its timing cannot be trusted ("" when it can)


def tuned_end_to_end(
    stand_in: OperatorGraph | Assignment,
    deploy: DeploySettings,
    sources: Sequence[Source],
    root: Path | None = None,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
) -> EndToEnd:
    """Both networks tuned and timed (this module's doc); `stand_in`: the operator in every
    layer it fits, or an assignment's operators in the layers it names."""
    threads = core_count()
    use_threads(threads)
    target = local_target(threads)
    folder = (root or tuning_root()) / "local" / DATABASE
    spec = deploy.spec
    original = build_backbone(spec, deploy.num_classes, deploy.seed).eval()
    candidate = build_backbone(spec, deploy.num_classes, deploy.seed).eval()
    report = replace_convs(candidate, stand_in, spec.resolution)
    if not report.replaced:
        reasons = sorted({o.detail for o in report.layers})
        raise DeployError(f"{report.operator} fits none of the convolutions of {deploy.label}: {'; '.join(reasons)}")
    example = torch.randn(1, 3, spec.resolution, spec.resolution, generator=torch.Generator().manual_seed(0))
    progress(0.01, f"timing PyTorch's {deploy.label}, original and with {report.operator}")
    eager = {
        name: torch_timing(model, example, deploy.repeat, deploy.min_repeat_ms)
        for name, model in (("original", original), ("candidate", candidate))
    }
    kernels = use_kernels(candidate, stand_in, report)
    runs = {}
    for i, (name, model) in enumerate((("original", original), ("candidate", candidate))):
        check_cancelled()
        what = f"{deploy.label}" if name == "original" else f"{deploy.label} with {report.operator}"

        def step(fraction: float, message: str, i=i) -> None:
            progress(0.05 + 0.45 * (i + fraction), f"{'original' if i == 0 else 'candidate'}: {message}")

        operator_kernels = [k.name for k in kernels] if name == "candidate" else []
        runs[name] = _run(
            model,
            example,
            what,
            target,
            folder,
            deploy,
            sources,
            step,
            check_cancelled,
            operator_kernels,
            eager[name].median_ms,
        )
    progress(1.0, "done")
    ours, base = runs["candidate"], runs["original"]
    alone = {k.kernel: k.latency_ms for k in ours.kernels}
    return EndToEnd(
        deploy=deploy.label,
        threads=threads,
        load=os.getloadavg()[0],
        latency_ms=ours.latency_ms,
        latency_std_ms=ours.latency_std_ms,
        baseline_latency_ms=base.latency_ms,
        baseline_std_ms=base.latency_std_ms,
        torch_latency_ms=ours.torch_ms,
        torch_baseline_ms=base.torch_ms,
        torch_speedup=base.torch_ms / ours.torch_ms,
        max_abs_error=ours.max_abs_error,
        timing_note=timing_note(base.doubt, ours.doubt),
        untuned_kernels=tuple(
            sorted({k.kernel for k in [*ours.kernels, *base.kernels] if k.source.startswith("untuned")})
        ),
        kernels=tuple(ours.kernels),
        baseline_kernels=tuple(base.kernels),
        operator_kernels=tuple(
            OperatorKernel(name, ms_, alone.get(name), ms_ / alone_ms if (alone_ms := alone.get(name)) else None)
            for name, ms_ in ours.kernel_ms.items()
        ),
        replacement=report.record(),
    )


def _run(
    model, example, what, target, folder, deploy, sources, progress, check_cancelled, operator_kernels, torch_ms
) -> NetworkRun:
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
    progress(0.9, "building and timing")
    vm = vm_of(compile_scheduled(mod, target, scheduled.database))
    error = check_network(vm, model, example, what)
    load = os.getloadavg()[0]
    timing = vm_timing(vm, example, deploy.repeat, deploy.min_repeat_ms)
    inside = kernel_times(vm, example, operator_kernels) if operator_kernels else {}
    doubt = timing.doubt(f"TVM's {what}") or busy_machine(max(load, os.getloadavg()[0]))
    return NetworkRun(timing.median_ms, timing.std_ms, torch_ms, error, scheduled.kernels, inside, doubt)
