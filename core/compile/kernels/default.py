"""TVM's own lowering of the operator (core.codegen.to_tvm) as a kernel: the PrimFunc fed the
torch module's weights in its argument order, tuned with MetaSchedule (kernels.metaschedule).
A tuned schedule is timed against the untuned kernel and kept only when it is faster."""

from __future__ import annotations

from collections.abc import Callable

import tvm

from ..place import Place
from ..settings import Settings
from ..workload import Workload
from .metaschedule import tuned_with_metaschedule
from .protocol import Progress, Tuned, Variant, host_arguments


class DefaultKernel:
    def __init__(self, workload: Workload, place: Place, settings: Settings):
        self.workload, self.place, self.settings = workload, place, settings

    def untuned(self) -> Variant:
        return self._variant(self.workload.lowered.module(), "untuned")

    def tune(self, progress: Progress, check_cancelled: Callable[[], None]) -> Tuned:
        module = self.workload.lowered.module()
        return tuned_with_metaschedule(module, self.place, self.settings, progress, check_cancelled, self._variant)

    def arguments(self) -> list:
        """The input, the torch module's weights (in the PrimFunc's argument order), an output buffer."""
        w = self.workload
        return host_arguments(w, [w.weight(weight.name) for weight in w.lowered.weights], w.lowered.output_shape)

    def _variant(self, module: tvm.IRModule, source: str) -> Variant:
        return Variant(module, self.arguments(), self.settings.algorithm, source)
