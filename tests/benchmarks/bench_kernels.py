"""Benchmark: TVM kernels of three example operators, untuned and MetaSchedule-tuned
(64 trials, xgb; conv2d 256 with its budget curve), against PyTorch (the generated module and torch's own convolution)
and against this machine's peak FP32 rate computed from its CPU features. Prints figures and ratios; the goal is
tuned TVM at least as fast as torch's conv2d.

Each TVM measurement runs through `core.compile.handlers:measure_call` in a spawned
process, as `tessera measure` does; tuning databases are kept in the usual cache
(~/.cache/tessera/tuning), so a second run reuses the trials of the first.
Run: `python -m tests.benchmarks.bench_kernels` or `tessera bench kernels`."""

from __future__ import annotations

import json
import os
import sys
import time

import torch
import torch.nn.functional as F

from core.compile.target import core_count, peak_gflops, use_threads
from core.compile.timing import time_torch
from core.jobs.isolate import call_in_subprocess
from tests.support import ROOT

TRIALS = 64
CONV_TRIALS = 256  # conv2d's budget curve: the best trial after 8, 16, ..., 256
BUDGETS = (8, 16, 32, 64, 128, 256)
EXAMPLES = ROOT / "resources" / "examples"


def conv2d(c: int, k: int):
    w = torch.randn(c, c, k, k)
    return lambda x: F.conv2d(x, w, padding=k // 2)


def grouped_conv(c: int, k: int, g: int):
    w = torch.randn(c, c // g, k, k)
    return lambda x: F.conv2d(x, w, padding=k // 2, groups=g)


def depthwise_separable(c: int, k: int):
    wd, wp = torch.randn(c, 1, k, k), torch.randn(c, c, 1, 1)
    return lambda x: F.conv2d(F.conv2d(x, wd, padding=k // 2, groups=c), wp)


# operator file, bindings (on top of its own: C_in = C_out = 64, H = W = 56, K = 3), torch's own version
CASES = [
    ("conv2d", {}, "torch conv2d", lambda: conv2d(64, 3)),
    ("grouped_conv", {"G": 4}, "torch conv2d groups=4", lambda: grouped_conv(64, 3, 4)),
    ("depthwise_separable", {}, "torch depthwise + 1x1 conv2d", lambda: depthwise_separable(64, 3)),
]


def measure(name: str, bindings: dict, trials: int) -> dict:
    document = json.loads((EXAMPLES / f"{name}.json").read_text())
    payload = {
        "operator": document,
        "bindings": bindings,
        "tune_trials": trials,
        "device": "local",
        "cost_model": "xgb",
    }
    start = time.monotonic()

    def report(fraction: float, message: str) -> None:
        print(f"  [{time.monotonic() - start:6.0f} s] {name}: {message}", file=sys.stderr, flush=True)

    result = call_in_subprocess("core.compile.handlers:measure_call", {"payload": payload}, on_progress=report)
    result["seconds"] = time.monotonic() - start
    return result


def peak(threads: int) -> tuple[float, str]:
    """The computed peak (core.compile.target.peak_gflops) and, beside it, a large float32
    matmul's measured rate; percentages are of the computed peak, so none can pass 100%."""
    n = 2048
    a, b = torch.randn(n, n), torch.randn(n, n)
    measured = 2 * n**3 / time_torch(lambda x: x @ b, a, 5, 200).median_ms / 1e6
    computed, text = peak_gflops(threads)
    if computed is None:  # no clock known: the measured rate is the best ceiling there is
        return measured, f"{text}; measured {n}x{n} matmul {measured:.1f} GFLOP/s used instead"
    return computed, f"{text}; measured {n}x{n} matmul {measured:.1f} GFLOP/s ({100 * measured / computed:.0f}% of it)"


def main() -> int:
    threads = core_count()
    use_threads(threads)
    torch.manual_seed(0)
    ceiling, peak_text = peak(threads)
    print(
        f"machine: {threads} cores, {os.uname().machine}; torch {torch.__version__}; threads {threads}; "
        f"load average {os.getloadavg()[0]:.1f} (timings on a busy machine vary)"
    )
    print(f"peak FP32: {peak_text}")
    print(f"tuning: MetaSchedule, xgb cost model, {TRIALS} trials per operator (databases reused if present)\n")
    rows, goal = [], None
    for name, bindings, torch_name, make_reference in CASES:
        untuned = measure(name, bindings, 0)
        tuned = measure(name, bindings, CONV_TRIALS if name == "conv2d" else TRIALS)
        x = torch.randn(1, 64, 56, 56)
        native = time_torch(make_reference(), x, 10, 100)
        flops = tuned["flops"]
        versions = [
            ("TVM untuned", untuned["latency_ms"], untuned["latency_std_ms"]),
            (
                f"TVM tuned ({tuned['trial_count']} trials, {tuned['new_trials']} new)",
                tuned["latency_ms"],
                tuned["latency_std_ms"],
            ),
            ("PyTorch module (generated)", tuned["torch_latency_ms"], tuned["torch_latency_std_ms"]),
            (torch_name, native.median_ms, native.std_ms),
        ]
        print(f"{name}  ({flops / 1e6:.1f} MFLOP, {', '.join(f'{k}={v}' for k, v in tuned['bindings'].items())})")
        print(f"  {'version':<36} {'median ms':>10} {'std ms':>8} {'GFLOP/s':>8} {'% peak':>7}")
        for label, ms, std in versions:
            gflops = flops / ms / 1e6
            print(f"  {label:<36} {ms:>10.3f} {std:>8.3f} {gflops:>8.2f} {100 * gflops / ceiling:>6.1f}%")
        best = [
            min(ms for i, ms in tuned["trials"] if i < n)
            for n in BUDGETS
            if n <= tuned["trial_count"] and any(i < n for i, _ in tuned["trials"])
        ]
        print(
            f"  tuned / untuned speed-up {untuned['latency_ms'] / tuned['latency_ms']:.1f}x; "
            f"tuned vs PyTorch module {tuned['torch_latency_ms'] / tuned['latency_ms']:.2f}x; "
            f"tuned vs {torch_name} {native.median_ms / tuned['latency_ms']:.2f}x (>1: TVM faster)"
        )
        print(
            f"  best trial after {'/'.join(map(str, BUDGETS[: len(best)]))} trials (ms): "
            f"{' / '.join(f'{b:.3f}' for b in best)}; "
            f"tuning run took {tuned['seconds']:.0f} s\n"
        )
        rows.append((name, tuned["latency_ms"], native.median_ms))
        if name == "conv2d":
            goal = native.median_ms / tuned["latency_ms"]
    print("summary (tuned TVM vs torch's own kernel): " + "; ".join(f"{n} {ref / ms:.2f}x" for n, ms, ref in rows))
    print(
        f"goal, tuned TVM conv2d at least as fast as torch conv2d: {'met' if goal >= 1 else 'not met'} "
        f"({goal:.2f}x); load average now {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
