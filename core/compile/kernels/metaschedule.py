"""MetaSchedule tuning as every kernel over a fixed data layout uses it (TVM's default lowering,
nchwc, im2col, winograd): the kernel's module tuned in the settings' tuning folder (earlier
trials count), the best schedule offered beside the untuned kernel, since the search does not
time that one and the faster of the two is kept."""

from __future__ import annotations

from collections.abc import Callable

import tvm

from ..place import Place
from ..settings import Settings
from ..tune import tune
from .protocol import Progress, Tuned, Variant


def tuned_with_metaschedule(
    module: tvm.IRModule,
    place: Place,
    settings: Settings,
    progress: Progress,
    check_cancelled: Callable[[], None],
    variant: Callable[[tvm.IRModule, str], Variant],
) -> Tuned:
    """Tune `module`; `variant(module, source)` makes the kernel of a schedule ('tuned', 'untuned').
    `progress` hears the share of the budget's trials done (core.compile.phases makes time of it)."""
    tuning = tune(
        module,
        place.target,
        settings.tuning_folder(),
        settings.tune_trials,
        cost_model=settings.cost_model,
        seed=settings.seed,
        check_cancelled=check_cancelled,
        place=place,
        on_progress=lambda done, total, what: progress(done / total, f"tuning: {what}"),
    )
    untuned = variant(module, "untuned")
    if tuning.schedule is None:
        return Tuned(tuning, (untuned,))
    return Tuned(tuning, (variant(tuning.schedule, "tuned"), untuned))
