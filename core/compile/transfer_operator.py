"""Transfer-tuning for one operator of our IR at given sizes: what a "transfer" job runs.

The operator is lowered, its class found, the best-ranked source's schedules of
that class tried on it (core.compile.transfer), with the torch module's output
on the same input and weights as the reference; the kernel kept (the fastest
reused schedule, else the untuned default) is then timed like a measurement
(core.compile.measure), beside torch. On an RPC device (`remote`) every candidate is
built for its target and checked and timed there; torch is then not timed (it runs
here, not there). Imports TVM: worker processes only."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import torch

from ..analysis.summary import summarize
from ..codegen import build_module
from ..codegen.to_tvm import lower
from ..ir.graph import OperatorGraph
from .kernel_class import kernel_class
from .measure import Progress, Settings, kernel_arguments, time_torch, timing_fields
from .target import local_target, use_threads
from .transfer import Bench, transfer_kernel
from .transfer_records import choose_source, schedules_of
from .transfer_sources import Source


def transfer_operator(
    graph: OperatorGraph,
    bindings: Mapping[str, int] | None,
    sources: Sequence[Source],
    settings: Settings,
    top_k: int = 1,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
    remote=None,
) -> dict:
    """Reuse tuned schedules on the operator; a JSON-able dict with the measurement fields
    (schedule_source 'transfer:<database> trial <n>', or 'untuned' when nothing beat the
    default) and what transfer-tuning did ('transfer': found, applied, skipped and why, ...)."""
    use_threads(settings.threads)
    target = remote.target if remote is not None else local_target(settings.threads)
    name = graph.name or "operator"
    progress(0.01, "generating TVM and torch code")
    lowered = lower(graph, bindings, settings.batch)
    kclass = kernel_class(lowered.func)
    torch.manual_seed(settings.seed)
    module = build_module(graph, bindings).eval()
    x = torch.randn(lowered.input_shape)
    with torch.inference_mode():
        reference = module(x).numpy()

    progress(0.05, f"looking for tuned schedules of {kclass.describe()}")
    start = time.perf_counter()
    kernels, ranking = choose_source(sources, {kclass.key: 1.0})
    candidates = schedules_of(kclass.key, kernels, top_k)
    scan_s = time.perf_counter() - start
    check_cancelled()
    progress(0.1, f"found {len(candidates)} schedules of {kclass.describe()}; timing the untuned kernel")
    bench = Bench(target, kernel_arguments(lowered, x, module), reference, name, remote)
    transfer = transfer_kernel(
        lowered.module(),
        kclass,
        bench,
        candidates,
        check_cancelled,
        on_tried=lambda done, total: progress(0.1 + 0.75 * done / total, f"tried {done} of {total} tuned schedules"),
    )
    check_cancelled()
    progress(0.88, "timing the kept kernel and torch")
    kernel = bench.build(transfer.best_mod or lowered.module())
    error = bench.check(kernel)
    tvm_time = bench.time(kernel, 1, settings.repeat, settings.min_repeat_ms)
    torch_time = time_torch(module, x, settings.repeat, settings.min_repeat_ms) if remote is None else None
    progress(1.0, "done")

    flops = summarize(graph, bindings).numeric_cost["flops"] * settings.batch
    summary = transfer.summary()
    return {
        "operator": name,
        "bindings": dict(lowered.plan.bindings),
        "batch": settings.batch,
        "flops": flops,
        "latency_ms": tvm_time.median_ms,
        "latency_std_ms": tvm_time.std_ms,
        "latency_runs_ms": list(tvm_time.runs_ms),
        "gflops": flops / tvm_time.median_ms / 1e6,
        **timing_fields(torch_time, tvm_time, flops),
        "max_abs_error": error,
        "tuned": transfer.best is not None,
        "algorithm": "default",
        "layout": "NCHW",
        "schedule_source": f"transfer:{summary['schedule']}" if transfer.best is not None else "untuned",
        "trial_count": 0,
        "found": summary["found"],
        "applied": summary["applied"],
        "skipped": summary["skipped"],
        "speedup_vs_untuned": summary["speedup_vs_untuned"],
        "search_s": scan_s + transfer.search_s,
        "transfer": {**summary, "sources_ranked": ranking},
        "target": str(target),
        "threads": settings.threads,
    }
