"""Compile an operator for the local CPU, check it against its torch module, time both.

One run does everything on the same random input and weights: the torch module
(core.codegen.build_module, kaiming-initialised) gives the reference output and
the weights TVM is fed; TVM's output must match it before any timing counts.
Both are timed the same way: warm-up, then `repeat` timed repeats of at least
`min_repeat_ms` each (TVM through `time_evaluator`), reported as median and
standard deviation, with the same thread count."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import tvm

from ..analysis.summary import summarize
from ..codegen import build_module
from ..codegen.to_tvm import Lowered, lower
from ..ir.graph import OperatorGraph
from .algorithms import ALGORITHMS
from .errors import CompileError, NumericalMismatch
from .gspc import GspcKernel
from .target import local_target, use_threads
from .tune import tune

Progress = Callable[[float, str], None]


SPREAD_LIMIT = 0.2  # runs whose standard deviation exceeds this share of the median time nothing
SHORTEST_MS = 0.005  # below 5 us per call, call overhead and timer resolution dominate


@dataclass(frozen=True)
class Timing:
    median_ms: float
    std_ms: float
    runs_ms: tuple[float, ...]  # mean time of one call, per repeat

    @classmethod
    def of(cls, runs_s) -> Timing:
        runs = tuple(float(r) * 1e3 for r in runs_s)
        return cls(statistics.median(runs), statistics.stdev(runs) if len(runs) > 1 else 0.0, runs)

    def doubt(self, what: str) -> str:
        """Why this timing cannot be trusted ("" when it can): runs that spread widely (a busy
        machine) or a call too short to time."""
        if self.median_ms < SHORTEST_MS:
            return f"{what} is too short to time reliably ({1e3 * self.median_ms:.1f} us per call)"
        if self.std_ms > SPREAD_LIMIT * self.median_ms:
            return f"{what}'s runs spread by {self.std_ms / self.median_ms:.0%} of their median"
        return ""


def timing_note(*doubts: str) -> str | None:
    """One line for a result: 'unreliable: ...' when any timing is in doubt, else None."""
    found = [d for d in doubts if d]
    return f"unreliable: {'; '.join(found)}" if found else None


@dataclass(frozen=True)
class Settings:
    batch: int = 1
    tune_trials: int = 0
    cost_model: str = "xgb"
    work_dir: Path | None = None  # tuning database; required when tune_trials > 0
    threads: int = 1
    repeat: int = 10
    min_repeat_ms: float = 100.0
    seed: int = 0
    algorithm: str = "default"  # or "gspc" (core.compile.gspc), for grouped convolutions
    tiles: tuple[int, int] | None = None  # gspc's (T_O, T_I); None: the defaults, or the tuning grid's choice

    def __post_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise CompileError(f"unknown algorithm {self.algorithm!r} (use {' or '.join(ALGORITHMS)})")
        if self.tiles is not None and self.algorithm != "gspc":
            raise CompileError(f"tile sizes (T_O, T_I) apply to algorithm 'gspc' only, not {self.algorithm!r}")


def measure_operator(
    graph: OperatorGraph,
    bindings: Mapping[str, int] | None,
    settings: Settings,
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
    remote=None,
) -> dict:
    """Tune (optionally), build, check and time the operator and its torch module: a JSON-able dict.
    With `remote` (an entered core.compile.remote.RemoteDevice) the kernel is built for, tuned on and
    timed on that RPC device, and torch is not timed (this CPU's time would say nothing about it)."""
    use_threads(settings.threads)
    target = remote.target if remote is not None else local_target(settings.threads)
    name = graph.name or "operator"
    progress(0.01, "generating TVM and torch code")
    lowered = lower(graph, bindings, settings.batch)
    gspc = (
        GspcKernel(graph, bindings, settings.batch, target, settings.tiles, remote)
        if settings.algorithm == "gspc"
        else None
    )
    torch.manual_seed(settings.seed)
    module = build_module(graph, bindings).eval()
    x = torch.randn(lowered.input_shape)
    with torch.inference_mode():
        reference = module(x).numpy()
    check_cancelled()

    tuning = None
    if gspc is not None and settings.tune_trials > 0:
        tuning = gspc.tune(settings.work_dir, settings.tune_trials, progress, check_cancelled)
    elif settings.tune_trials > 0:
        progress(0.05, f"tuning with up to {settings.tune_trials} trials")
        tuning = tune(
            lowered.module(),
            target,
            settings.work_dir,
            settings.tune_trials,
            cost_model=settings.cost_model,
            seed=settings.seed,
            check_cancelled=check_cancelled,
            rpc=remote.rpc_config if remote is not None else None,
            on_progress=lambda done, total, what: progress(0.05 + 0.75 * done / total, f"tuning: {what}"),
        )
    check_cancelled()
    tuned = tuning is not None and tuning.schedule is not None
    # a tuned default lowering is timed against the untuned one and kept only if faster
    # (gspc's tuning already times its default tiles among the grid)
    kernels = {"tuned": tuning.schedule} if tuned else {}
    if gspc is None or not tuned:
        kernels["untuned"] = (gspc or lowered).module()
    args = gspc.arguments(x, module) if gspc is not None else kernel_arguments(lowered, x, module)
    timed: dict[str, tuple[Timing, float]] = {}
    for step, (label, mod) in enumerate(kernels.items()):
        progress(0.82 + 0.06 * step, f"building the {label} kernel")
        executable = _compile(mod, target, name)
        kernel, dev, on_dev = remote.load(executable, args) if remote is not None else (executable.mod, tvm.cpu(), args)
        kernel["main"](*on_dev)  # also the warm-up
        error = check_close(on_dev[-1].numpy(), reference, name)
        check_cancelled()
        progress(0.85 + 0.06 * step, f"timing the {label} kernel")
        timed[label] = time_kernel(kernel, dev, on_dev, 1, settings.repeat, settings.min_repeat_ms), error
    kept = min(timed, key=lambda label: timed[label][0].median_ms)
    tvm_time, error = timed[kept]
    progress(0.95, "timing torch")
    torch_time = time_torch(module, x, settings.repeat, settings.min_repeat_ms) if remote is None else None
    progress(1.0, "done")

    cost = summarize(graph, bindings).numeric_cost
    flops = cost["flops"] * settings.batch
    trials = tuning.trials if tuning is not None else []
    return {
        "operator": name,
        "bindings": dict(lowered.plan.bindings),
        "batch": settings.batch,
        "flops": flops,
        "params": cost["params"],
        "latency_ms": tvm_time.median_ms,
        "latency_std_ms": tvm_time.std_ms,
        "latency_runs_ms": list(tvm_time.runs_ms),
        "gflops": flops / tvm_time.median_ms / 1e6,
        **timing_fields(torch_time, tvm_time, flops, _behind_best_trial(tvm_time, tuning if kept == "tuned" else None)),
        "max_abs_error": error,
        "tuned": kept == "tuned",
        "algorithm": "default",
        "layout": "NCHW",
        "schedule_source": _source(kept, timed),
        "trial_count": len(trials),
        "new_trials": tuning.new_trials if tuning is not None else 0,
        "trials": [[i, ms] for i, ms in trials if ms is not None],
        "best_trial_ms": tuning.best_ms if tuning is not None else None,
        "cost_model": settings.cost_model if tuning is not None else None,
        "tuning_dir": str(tuning.work_dir) if tuning is not None else None,
        "target": str(target),
        "threads": settings.threads,
        **(gspc.fields(tuned) if gspc is not None else {}),
    }


def _behind_best_trial(timing: Timing, tuning) -> str:
    """A tuned kernel that times well behind its own best trial (other load while timing)."""
    best = tuning.best_ms if tuning is not None else None
    if best and timing.median_ms > (1 + SPREAD_LIMIT) * best:
        return f"the tuned kernel timed {timing.median_ms / best - 1:.0%} slower than its best trial ({best:.4g} ms)"
    return ""


def _source(kept: str, timed: dict[str, tuple[Timing, float]]) -> str:
    """Where the kept schedule came from; says so when tuning lost to TVM's default."""
    if kept == "untuned" and "tuned" in timed:
        return f"untuned (the tuned schedule ran slower: {timed['tuned'][0].median_ms:.4g} ms)"
    return kept


def _compile(mod: tvm.IRModule, target: tvm.target.Target, name: str):
    try:
        return tvm.compile(mod, target=target)
    except (RuntimeError, ValueError) as e:
        raise CompileError(f"{name}: TVM could not build the kernel: {e}") from None


def kernel_arguments(lowered: Lowered, x: torch.Tensor, module: torch.nn.Module) -> list:
    """Input, the module's own weights (argument order of the PrimFunc), an output buffer."""
    dev = tvm.cpu()
    params = dict(module.named_parameters())
    return [
        tvm.runtime.tensor(x.numpy(), dev),
        *(tvm.runtime.tensor(params[w.name].detach().numpy(), dev) for w in lowered.weights),
        tvm.runtime.empty(lowered.output_shape, "float32", dev),
    ]


def check_close(got: np.ndarray, reference: np.ndarray, name: str) -> float:
    """Largest absolute difference from torch's output; NumericalMismatch beyond float32 noise
    (1e-3 of the output's magnitude)."""
    error = float(np.abs(got - reference).max()) if got.size else 0.0
    tolerance = 1e-3 * max(1.0, float(np.abs(reference).max()) if reference.size else 0.0)
    if not error <= tolerance:  # also catches NaN
        raise NumericalMismatch(
            f"{name}: TVM's output differs from the torch module's by up to {error:.3g} (tolerance {tolerance:.3g})",
            error,
        )
    return error


def time_kernel(kernel, dev, args: list, number: int, repeat: int, min_repeat_ms: float) -> Timing:
    """A built kernel's "main" timed on `dev` (this CPU or an RPC server's) by TVM's evaluator."""
    evaluator = kernel.time_evaluator("main", dev, number=number, repeat=repeat, min_repeat_ms=int(min_repeat_ms))
    return Timing.of(evaluator(*args).results)


def timing_fields(torch_time: Timing | None, tvm_time: Timing, flops: float, *doubts: str) -> dict:
    """torch's latency and TVM's speed-up over it (None where torch was not timed: RPC devices),
    and the note saying when either timing (or one of `doubts`) cannot be trusted."""
    note = timing_note(tvm_time.doubt("TVM's kernel"), torch_time.doubt("PyTorch") if torch_time else "", *doubts)
    if torch_time is None:
        return {
            **dict.fromkeys(("torch_latency_ms", "torch_latency_std_ms", "torch_gflops", "speedup_vs_torch")),
            "timing_note": note,
        }
    return {
        "torch_latency_ms": torch_time.median_ms,
        "torch_latency_std_ms": torch_time.std_ms,
        "torch_gflops": flops / torch_time.median_ms / 1e6,
        "speedup_vs_torch": torch_time.median_ms / tvm_time.median_ms,
        "timing_note": note,
    }


def time_torch(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, repeat: int, min_repeat_ms: float
) -> Timing:
    """Like time_evaluator: calls per repeat doubled until a repeat lasts min_repeat_ms."""

    def run(number: int) -> float:
        start = time.perf_counter()
        for _ in range(number):
            fn(x)
        return time.perf_counter() - start

    with torch.inference_mode():
        number = 1
        while run(number) * 1e3 < min_repeat_ms:  # doubles as the warm-up
            number *= 2
        return Timing.of([run(number) / number for _ in range(repeat)])
