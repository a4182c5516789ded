"""The `auto` algorithm: measure every algorithm that can run the operator (each tuned with the
same trial budget, each checked against torch), keep the fastest. The kept measurement is that
algorithm's own (its `algorithm` names it) with what every candidate timed, or why it failed or
was refused, in algorithm_details["auto"] (core.compile.algorithms.auto_summary
reads it in one line), so the result says what was chosen and from what.
Imports TVM: worker processes only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..store.measurement import Measurement
from .algorithms import ALGORITHMS, algorithms_for
from .errors import CompileError
from .kernels.protocol import Progress, make_kernel
from .measure import measure_operator
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
    tune is noted and left out); the fastest measurement, with the comparison in its details."""
    names, refused = algorithms_for(workload.graph, workload.bindings, settings.sequence is not None)
    measured: dict[str, Measurement] = {}
    failed: dict[str, str] = {}
    for i, name in enumerate(names):
        one = replace(settings, algorithm=name, tiles=settings.tiles if ALGORITHMS[name].tiles else None)

        def share(fraction: float, message: str, i=i, name=name) -> None:
            progress((i + fraction) / len(names), f"{name} ({i + 1} of {len(names)}): {message}")

        try:
            kernel = make_kernel(workload, place, one)
            measured[name] = measure_operator(workload, kernel, place, one, share, check_cancelled)
        except CompileError as e:  # NumericalMismatch and TuningError too: the others still compete
            failed[name] = str(e)
    if not measured:
        raise CompileError(f"{workload.name}: no algorithm could be measured: {'; '.join(failed.values())}")
    kept = min(measured.values(), key=lambda m: m.latency_ms)
    comparison = {
        "kept": kept.algorithm,
        "latency_ms": {name: m.latency_ms for name, m in measured.items()},
        "failed": failed,
        "refused": refused,
    }
    return replace(kept, algorithm_details={**kept.algorithm_details, "auto": comparison})
