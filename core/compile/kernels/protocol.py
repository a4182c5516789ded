"""What a kernel algorithm is to measuring and tuning: one small protocol.

A Kernel is made for one workload (core.compile.workload: the operator at its sizes, with its
torch module, input and reference output), the place it runs (core.compile.place) and the
request's settings (core.compile.settings). It answers two questions:

- `untuned()`: the kernel as the algorithm builds it without tuning, as a Variant: its TVM
  module, the arguments it takes (the workload's input, the torch module's weights as the
  kernel takes them, an output buffer last), and what a result says about it (the layout,
  and `details`: what the algorithm chose, e.g. gspc's tile sizes);
- `tune(progress, check_cancelled)`: spend the settings' trial budget (records kept in
  settings.tuning_folder(), earlier trials counted; `progress` hears the share of its trials
  done, core.compile.phases makes time of it) and return the variants to time: the
  fastest is kept, so an algorithm whose search did not time its untuned kernel offers it
  beside the tuned one.

Measuring builds, checks and times the variants the same way for every algorithm
(core.compile.measure). A new algorithm is a module of core.compile.kernels with a class
that takes (workload, place, settings) and has these two methods, and one line in
core.compile.algorithms.ALGORITHMS naming it."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import tvm

from ..algorithms import algorithm
from ..errors import CompileError
from ..place import Place
from ..settings import Settings
from ..tune import Tuning
from ..workload import Workload

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Variant:
    """One kernel to build, check and time, and what the result says about it."""

    module: tvm.IRModule
    arguments: list  # host tensors (tvm.runtime.tensor): the input, the weights, the output last
    algorithm: str  # its name in core.compile.algorithms
    source: str = "untuned"  # where its schedule came from: 'untuned', 'tuned', 'transfer:...'
    layout: str = "NCHW"
    details: dict[str, Any] = field(default_factory=dict)  # what the algorithm chose (JSON)

    @property
    def tuned(self) -> bool:
        return self.source != "untuned"


@dataclass(frozen=True)
class Tuned:
    tuning: Tuning  # the trials, the records' folder, the best trial
    variants: tuple[Variant, ...]  # to time; the fastest is kept


class Kernel(Protocol):
    def untuned(self) -> Variant: ...

    def tune(self, progress: Progress, check_cancelled: Callable[[], None]) -> Tuned: ...


def host_arguments(workload: Workload, weights: Sequence[np.ndarray], output_shape: Sequence[int]) -> list:
    """A kernel's arguments as host tensors: the workload's input, `weights` in the layout and
    order the kernel takes them, and an output buffer of `output_shape`."""
    dev = tvm.cpu()
    return [
        tvm.runtime.tensor(workload.x.numpy(), dev),
        *(tvm.runtime.tensor(np.ascontiguousarray(a), dev) for a in weights),
        tvm.runtime.empty(tuple(output_shape), "float32", dev),
    ]


def make_kernel(workload: Workload, place: Place, settings: Settings) -> Kernel:
    """settings.algorithm's Kernel (the class its registry entry names) for the workload."""
    path = algorithm(settings.algorithm).kernel
    if path is None:
        raise CompileError(f"algorithm {settings.algorithm!r} has no kernel of its own (core.compile.auto measures it)")
    module, _, name = path.partition(":")
    kernel: Kernel = getattr(importlib.import_module(module), name)(workload, place, settings)
    return kernel
