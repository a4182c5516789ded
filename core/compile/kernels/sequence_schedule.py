"""A transformation sequence's own schedule as a kernel (NAS-PTE): the loop nest the sequence
ends with (core.codegen.loopnest_tvm, its architecture steps baked in) scheduled by its
meaning-preserving steps (split, reorder, fuse, unroll, vectorize, parallel, prefetch). The nest is fed
the torch module's weights of the operator the sequence makes (core.codegen.loopnest_ir:
result_operator), one per part, so its output is checked against the same reference as every
other kernel. Tuning runs MetaSchedule on the same nest unscheduled, and the sequence's own
schedule is timed beside what it finds: the faster is kept."""

from __future__ import annotations

from collections.abc import Callable
from math import prod

import tvm

from ...analysis.legality import check_sequence
from ...codegen.loopnest_tvm import build_expression, schedule
from ...ir.loopnest import BASES
from ...ir.sequence import sequence_from_document
from ..errors import CompileError
from ..place import Place
from ..settings import Settings
from ..workload import Workload
from .metaschedule import tuned_with_metaschedule
from .protocol import Progress, Tuned, Variant, host_arguments


class SequenceKernel:
    def __init__(self, workload: Workload, place: Place, settings: Settings):
        assert settings.sequence is not None  # Settings refuses the algorithm without one
        self.workload, self.place, self.settings = workload, place, settings
        seq = sequence_from_document(settings.sequence, "the operator's sequence")
        sizes = {k: v for k, v in workload.bindings.items() if k in BASES[seq.nest].variables}
        report = check_sequence(seq, sizes)
        self.untransformed, _, self.own = schedule(report, workload.batch)
        self.steps = len(seq.steps)
        assert report.final is not None  # schedule() refuses a sequence that did not finish
        args, _ = build_expression(report.final, workload.batch)
        self._arguments = self._fed(args)

    def untuned(self) -> Variant:
        return self._variant(self.own, "untuned")

    def tune(self, progress: Progress, check_cancelled: Callable[[], None]) -> Tuned:
        """MetaSchedule on the unscheduled nest; the sequence's own schedule is the untuned variant."""
        return tuned_with_metaschedule(
            self.untransformed,
            self.place,
            self.settings,
            progress,
            check_cancelled,
            lambda module, source: self._variant(self.own if source == "untuned" else module, source),
        )

    def _variant(self, module: tvm.IRModule, source: str) -> Variant:
        schedule = "the sequence's own" if source == "untuned" else "MetaSchedule's, on the sequence's nest"
        details = {"schedule": schedule, "sequence_steps": self.steps}
        return Variant(module, self._arguments, self.settings.algorithm, source, details=details)

    def _fed(self, args: list) -> list:
        """The nest's arguments: the workload's input, each part's weight from the torch module's
        weight of that part (the same numbers, in the nest's [co, ci, kh, kw] shape), an output
        buffer; a CompileError when the nest and the operator disagree (not this sequence's operator)."""
        w = self.workload
        shapes = [tuple(int(s) for s in a.shape) for a in args]
        weights = [w.weight(weight.name) for weight in w.lowered.weights]
        mismatch = (
            shapes[0] != tuple(w.x.shape)
            or shapes[-1] != tuple(w.lowered.output_shape)
            or [int(a.size) for a in weights] != [prod(s) for s in shapes[1:-1]]
        )
        if mismatch:
            raise CompileError(
                f"{w.name}: the sequence's loop nest takes {shapes[0]} -> {shapes[-1]} with weights "
                f"{shapes[1:-1]}, the operator {list(w.x.shape)} -> {list(w.lowered.output_shape)} with "
                f"{[list(a.shape) for a in weights]}: it is not the operator this sequence makes"
            )
        return host_arguments(w, [a.reshape(s) for a, s in zip(weights, shapes[1:-1])], shapes[-1])
