"""Transfer-tuning one operator of our IR at given sizes: what a "transfer" job runs.

The best-ranked source's tuned schedules of the operator's kernel class are tried on TVM's
default lowering of it (core.compile.transfer), each checked against the torch module's
output and timed where the kernel runs (core.compile.place); the kernel kept (the fastest
reused schedule, else the untuned default) is then measured like any other
(core.compile.measure). Imports TVM: worker processes only."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..store.measurement import Measurement
from .kernel_class import kernel_class
from .kernels.default import DefaultKernel
from .kernels.protocol import Progress
from .measure import choices, measure_variants
from .phases import Expected
from .place import Place
from .settings import Settings
from .transfer import Bench, transfer_kernel
from .transfer_records import choose_source, schedules_of
from .transfer_sources import Source
from .workload import Workload


def transfer_operator(
    workload: Workload,
    place: Place,
    settings: Settings,
    sources: Sequence[Source],
    top_k: int = 1,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
    started: float | None = None,
) -> Measurement:
    """Reuse tuned schedules on the operator: a Measurement whose schedule_source is
    'transfer:<database> trial <n>' ('untuned' when nothing beat the default) and whose
    `transfer` says what was found, applied, skipped and why, the sources ranked, the
    speed-up over untuned and the search time. Progress is the share of the expected running
    time spent since `started` (core.compile.phases): a tried schedule's seconds (its build and
    run) estimate the tries left and the kept kernel's build."""
    expected = Expected(settings, progress, started, choices(place))
    kclass = kernel_class(workload.lowered.func)
    expected.report(None, f"looking for tuned schedules of {kclass.describe()}")
    start = time.perf_counter()
    kernels, ranking = choose_source(sources, {kclass.key: 1.0})
    candidates = schedules_of(kclass.key, kernels, top_k)
    scan_s = time.perf_counter() - start
    check_cancelled()
    untuned = DefaultKernel(workload, place, settings).untuned()
    tries = expected.tuning(1.0, lambda: expected.after_search(1, 1 + place.times_torch))
    tries(0.0, f"found {len(candidates)} schedules of {kclass.describe()}; timing the untuned kernel")
    begun = time.monotonic()

    def tried(done: int, total: int) -> None:
        expected.built((time.monotonic() - begun) / done)  # each try builds and runs a kernel
        tries(done / total, f"tried {done} of {total} tuned schedules")

    transfer = transfer_kernel(
        untuned.module,
        kclass,
        Bench(place, untuned.arguments, workload.reference, workload.name),
        candidates,
        check_cancelled,
        on_tried=tried,
    )
    check_cancelled()
    kept = untuned
    if transfer.best is not None and transfer.best_mod is not None:
        kept = replace(untuned, module=transfer.best_mod, source=f"transfer:{transfer.best.schedule.name}")
    summary = {**transfer.summary(), "search_s": scan_s + transfer.search_s, "sources_ranked": ranking}
    return measure_variants(workload, place, settings, [kept], expected, check_cancelled, transfer=summary)[0]
