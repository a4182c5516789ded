"""The `auto` algorithm: measure every algorithm that can run the operator (each tuned with the
same trial budget, each checked against torch), keep the fastest. The kept measurement is that
algorithm's own (its `algorithm` names it) with what every candidate timed, or why it failed or
was refused, in algorithm_details["auto"] (core.compile.algorithms.auto_summary reads it in one
line), so the result says what was chosen and from what. The choice is made on the kept
kernels timed in alternating rounds ("latency_ms"; each one's own measurement: "measured_ms").
Imports TVM: worker processes only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..store.measurement import Measurement
from .algorithms import ALGORITHMS, algorithms_for
from .errors import CompileError
from .kernels.protocol import Progress, Variant, make_kernel
from .measure import alternating_medians, measure_kernel
from .place import Place
from .settings import Settings
from .workload import Workload


def measure_fastest(
    workload: Workload,
    place: Place,
    settings: Settings,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
) -> Measurement:
    """Each algorithm measured as `settings` asks (an algorithm that fails to build, check or
    tune is noted and left out), then the kept kernels timed against each other in
    alternating rounds: measured one after another, minutes apart, a load change while one is
    timed could decide between them. The fastest there is kept, its own measurement returned
    with the comparison in its details."""
    names, refused = algorithms_for(workload.graph, workload.bindings, settings.sequence is not None)
    measured: dict[str, tuple[Measurement, Variant]] = {}
    failed: dict[str, str] = {}
    for i, name in enumerate(names):
        one = replace(settings, algorithm=name, tiles=settings.tiles if ALGORITHMS[name].tiles else None)

        def share(fraction: float, message: str, i=i, name=name) -> None:
            progress((i + fraction) * 0.95 / len(names), f"{name} ({i + 1} of {len(names)}): {message}")

        try:
            kernel = make_kernel(workload, place, one)
            measured[name] = measure_kernel(workload, kernel, place, one, share, check_cancelled)
        except CompileError as e:  # NumericalMismatch and TuningError too: the others still compete
            failed[name] = str(e)
    if not measured:
        raise CompileError(f"{workload.name}: no algorithm could be measured: {'; '.join(failed.values())}")
    check_cancelled()
    progress(0.95, f"timing the {len(measured)} kept kernels in alternating rounds")
    rounds = alternating_medians(workload, place, settings, {name: v for name, (_, v) in measured.items()})
    kept = measured[min(rounds, key=lambda name: rounds[name])][0]
    comparison = {
        "kept": kept.algorithm,
        "latency_ms": rounds,
        "measured_ms": {name: m.latency_ms for name, (m, _) in measured.items()},
        "failed": failed,
        "refused": refused,
    }
    return replace(kept, algorithm_details={**kept.algorithm_details, "auto": comparison})
