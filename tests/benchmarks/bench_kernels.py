"""Benchmark: every kernel algorithm that can run three example operators (conv2d 64->64 3x3
56x56, grouped conv G=4, depthwise-separable), each tuned with the same MetaSchedule budget
(64 trials, xgb; gspc its tile grid), the `auto` pick, against torch's own kernel timed in the
same run (with all threads and with one: the faster is the reference), and against this
machine's peak FP32 rate computed from its CPU features (shown next to a measured matmul rate;
no percentage can pass 100%). Then the best conv2d latency after
8/16/32/64/128/256 trials of the default algorithm, so users see what more trials buy.

Each TVM measurement runs through `core.compile.handlers:measure_call` in a spawned process,
as `tessera measure --algorithm NAME` does; tuning databases are kept in the usual cache
(~/.cache/tessera/tuning), so a second run reuses the trials of the first, and `auto` (run
last) reuses every algorithm's trials and only re-times them. The budget curve tunes in a
folder of its own, so its 256 trials do not favour the default algorithm in `auto`. Every
tuned kernel's time is compared with its own best trial; where they disagree by more than 20%
the row says why (the result's timing note, or the untuned kernel kept).
Run: `python -m tests.benchmarks.bench_kernels [--quick]` or `tessera bench kernels`
(--quick: 8 trials, budget curve to 32: a few minutes instead of about an hour)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from core.compile.algorithms import algorithms_for
from core.compile.target import core_count, peak_gflops, use_threads
from core.compile.timing import SPREAD_LIMIT, Timing, time_torch
from core.compile.tune import tuning_root
from core.ir.serialize import graph_from_document
from core.jobs.isolate import call_in_subprocess
from tests.support import ROOT

BUDGETS = (8, 16, 32, 64, 128, 256)
EXAMPLES = ROOT / "resources" / "examples"
CURVE_FOLDER = "bench-budget-curve"  # beside the tuning databases


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


def measure(name: str, bindings: dict, trials: int, algorithm: str, root: str | None) -> dict:
    payload = {
        "operator": json.loads((EXAMPLES / f"{name}.json").read_text()),
        "bindings": bindings,
        "tune_trials": trials,
        "device": "local",
        "cost_model": "xgb",
        "algorithm": algorithm,
        "tuning_root": root,
    }
    start = time.monotonic()

    def report(fraction: float, message: str) -> None:
        print(f"  [{time.monotonic() - start:6.0f} s] {name} {algorithm}: {message}", file=sys.stderr, flush=True)

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


def torch_reference(fn, threads: int) -> tuple[Timing, dict[int, Timing]]:
    """torch's own kernel timed with all threads and with one: the faster is the reference, so a
    busy machine, which hurts torch's OpenMP threads most, does not flatter TVM."""
    x = torch.randn(1, 64, 56, 56)
    timings = {}
    for count in sorted({threads, 1}, reverse=True):
        torch.set_num_threads(count)
        timings[count] = time_torch(fn, x, 10, 100)
    torch.set_num_threads(threads)
    return min(timings.values(), key=lambda t: t.median_ms), timings


def agreement(r: dict) -> str:
    """Whether the kept kernel's time agrees with its best tuning trial (within 20%), or why not."""
    best = r.get("best_trial_ms")
    if not r["trial_count"] or best is None:
        return "untuned"
    ratio = r["latency_ms"] / best
    if not r["tuned"]:
        why = r["schedule_source"]
    elif abs(ratio - 1) <= SPREAD_LIMIT:
        why = "agrees"
    elif ratio > 1:  # the result's timing note says so too
        why = "slower: the best of many brief trials is the luckiest, and the trials ran at another load"
    else:
        why = "faster: the trials (3 runs of 50 ms each) ran while the machine was busier"
    return f"{ratio:.2f}x best trial: {why}"


def table(rows: list[tuple[str, dict]], flops: float, ceiling: float, native_ms: float) -> None:
    header = ("version", "median ms", "std ms", "GFLOP/s", "% peak", "vs torch", "tuned vs best trial")
    lines = [header]
    for label, r in rows:
        ms, std = r["latency_ms"], r["latency_std_ms"] or 0.0
        gflops = flops / ms / 1e6
        lines.append(
            (label, f"{ms:.3f}", f"{std:.3f}", f"{gflops:.1f}", f"{100 * gflops / ceiling:.1f}%",
             f"{native_ms / ms:.2f}x", agreement(r) if "trial_count" in r else "")
        )  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        cells = (c.ljust(w) if i in (0, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
        print(("  " + "  ".join(cells)).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Every kernel algorithm per example operator, auto, torch, the peak.")
    parser.add_argument("--quick", action="store_true", help="8 trials per algorithm, budget curve to 32 trials")
    parser.add_argument("--tuning-dir", metavar="DIR", help="tuning databases (default ~/.cache/tessera/tuning)")
    args = parser.parse_args(argv)
    root = str(Path(args.tuning_dir).resolve()) if args.tuning_dir else None
    curve_root = str(Path(root or tuning_root()).parent / CURVE_FOLDER)
    trials, budgets = (8, BUDGETS[:3]) if args.quick else (64, BUDGETS)
    threads = core_count()
    use_threads(threads)
    torch.manual_seed(0)
    ceiling, peak_text = peak(threads)
    print(
        f"machine: {threads} cores, {os.uname().machine}; torch {torch.__version__}; threads {threads}; "
        f"load average {os.getloadavg()[0]:.1f} at the start (timings on a busy machine vary)"
    )
    print(f"peak FP32: {peak_text}")
    print(f"tuning: MetaSchedule, xgb cost model, {trials} trials per algorithm (databases reused if present)\n")
    summary = []
    for name, bindings, torch_name, make_reference in CASES:
        document = json.loads((EXAMPLES / f"{name}.json").read_text())
        graph = graph_from_document(document)
        names, refused = algorithms_for(graph, {**graph.bindings, **bindings})
        untuned = measure(name, bindings, 0, "default", root)
        results = [(algorithm, measure(name, bindings, trials, algorithm, root)) for algorithm in names]
        auto = measure(name, bindings, trials, "auto", root)
        native, timings = torch_reference(make_reference(), threads)
        sizes = ", ".join(f"{k}={v}" for k, v in untuned["bindings"].items())
        print(f"{name}  ({untuned['flops'] / 1e6:.1f} MFLOP, {sizes})")
        rows = [
            ("default untuned", untuned),
            *((f"{a} tuned", r) for a, r in results),
            (f"auto -> {auto['algorithm']}", auto),
        ]
        rows.append(
            (
                "PyTorch module (generated)",
                {"latency_ms": untuned["torch_latency_ms"], "latency_std_ms": untuned["torch_latency_std_ms"]},
            )
        )
        for count, timing in timings.items():
            label = f"{torch_name}, {count} thread{'s' * (count > 1)}"
            rows.append((label, {"latency_ms": timing.median_ms, "latency_std_ms": timing.std_ms}))
        table(rows, untuned["flops"], ceiling, native.median_ms)
        for why in refused:
            print(f"  not run: {why}")
        best_name, best = min(results, key=lambda pair: pair[1]["latency_ms"])
        print(
            f"  auto kept {auto['algorithm']} ({auto['latency_ms']:.3f} ms); fastest in the table: {best_name} "
            f"({best['latency_ms']:.3f} ms), {native.median_ms / best['latency_ms']:.2f}x torch's own kernel (>1: TVM faster)\n"
        )
        summary.append(f"{name} {best_name} {native.median_ms / best['latency_ms']:.2f}x")
    curve = measure("conv2d", {}, budgets[-1], "default", curve_root)
    best = [min(ms for i, ms in curve["trials"] if i < n) for n in budgets if any(i < n for i, _ in curve["trials"])]
    print(f"conv2d, default algorithm, best trial after {'/'.join(map(str, budgets[: len(best)]))} trials (ms): "
          f"{' / '.join(f'{b:.3f}' for b in best)}; kept kernel {curve['latency_ms']:.3f} ms ({agreement(curve)}); "
          f"{curve['new_trials']} new trials took {curve['seconds']:.0f} s (folder {curve_root})")  # fmt: skip
    print("summary (fastest tuned TVM algorithm vs torch's own kernel): " + "; ".join(summary))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
