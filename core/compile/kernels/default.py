"""TVM's own lowering of the operator (core.codegen.to_tvm) as a kernel: the PrimFunc fed the
torch module's weights in its argument order, tuned with MetaSchedule (core.compile.tune).
A tuned schedule is timed against the untuned kernel and kept only when it is faster."""

from __future__ import annotations

from collections.abc import Callable

import tvm

from ..place import Place
from ..settings import Settings
from ..tune import tune
from ..workload import Workload
from .protocol import Progress, Tuned, Variant


class DefaultKernel:
    def __init__(self, workload: Workload, place: Place, settings: Settings):
        self.workload, self.place, self.settings = workload, place, settings

    def untuned(self) -> Variant:
        return self._variant(self.workload.lowered.module(), "untuned")

    def tune(self, progress: Progress, check_cancelled: Callable[[], None]) -> Tuned:
        s = self.settings
        progress(0.05, f"tuning with up to {s.tune_trials} trials")
        tuning = tune(
            self.workload.lowered.module(),
            self.place.target,
            s.tuning_folder(),
            s.tune_trials,
            cost_model=s.cost_model,
            seed=s.seed,
            check_cancelled=check_cancelled,
            runner=self.place.runner(),
            on_progress=lambda done, total, what: progress(0.05 + 0.75 * done / total, f"tuning: {what}"),
        )
        untuned = self.untuned()
        if tuning.schedule is None:
            return Tuned(tuning, (untuned,))
        return Tuned(tuning, (self._variant(tuning.schedule, "tuned"), untuned))

    def arguments(self) -> list:
        """The input, the torch module's weights (in the PrimFunc's argument order), an output buffer."""
        w, dev = self.workload, tvm.cpu()
        return [
            tvm.runtime.tensor(w.x.numpy(), dev),
            *(tvm.runtime.tensor(w.weight(weight.name), dev) for weight in w.lowered.weights),
            tvm.runtime.empty(w.lowered.output_shape, "float32", dev),
        ]

    def _variant(self, module: tvm.IRModule, source: str) -> Variant:
        return Variant(module, self.arguments(), self.settings.algorithm, source)
