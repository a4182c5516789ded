"""Benchmark: does a kernel's speedup over PyTorch hold on a busy machine?

The same kernel (conv2d.json at C_in = C_out = 16, 16x16, K = 3, untuned: the case whose
speedup read 0.60x, 16.5x and 34.5x in three measurements under load) is measured RUNS times
on the machine as it is ("quiet") and RUNS times beside a CPU-bound load on every core (one
spinning process per core, started and stopped here), each time as `tessera measure` does it:
a fresh worker process, the kernel and PyTorch's module timed in interleaved rounds, each on
its faster count of the threads that are free (core.compile.rounds, core.compile.target). Printed: every run's speedup with its 95%
interval, threads and load, then the spread of the speedup (max / min) over all the runs,
which should be at most TARGET. A machine other people use is never quite quiet: the load
average is printed beside every figure.

Run: `python -m tests.benchmarks.bench_timing [--runs 5] [--min-repeat-ms 100]`."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time

from core.jobs.isolate import call_in_subprocess
from core.store.measurement import speedup_text
from tests.support import EXAMPLES

BINDINGS = {"C_in": 16, "C_out": 16, "H": 16, "W": 16, "K": 3}
TARGET = 1.3


def _spin() -> None:
    while True:
        pass


def measure(min_repeat_ms: float) -> dict:
    """One measurement of the kernel in a fresh worker process, as `tessera measure` makes it."""
    payload = {
        "operator": json.loads((EXAMPLES / "conv2d.json").read_text()),
        "bindings": BINDINGS,
        "min_repeat_ms": min_repeat_ms,
    }
    return call_in_subprocess("core.compile.handlers:measure_call", {"payload": payload})


def runs(count: int, min_repeat_ms: float, loaded: bool) -> list[dict]:
    """`count` measurements, beside one spinning process per core when `loaded`."""
    spinners = [
        multiprocessing.get_context("spawn").Process(target=_spin, daemon=True) for _ in range(os.cpu_count() or 1)
    ]
    for spinner in spinners if loaded else ():
        spinner.start()
    try:
        time.sleep(2.0 if loaded else 0.0)  # the load is on before timing starts
        found = []
        for i in range(count):
            before = os.getloadavg()[0]
            result = measure(min_repeat_ms)
            found.append({**result, "load_before": before})
            print(_line("loaded" if loaded else "quiet", i + 1, found[-1]), flush=True)
        return found
    finally:
        for spinner in spinners if loaded else ():
            spinner.kill()
            spinner.join()


def _line(condition: str, run: int, r: dict) -> str:
    note = f"; {r['timing_note']}" if r.get("timing_note") else ""
    return (
        f"  {condition:6} run {run}: speedup {speedup_text(r['speedup'], r['speedup_low'], r['speedup_high'])} "
        f"over {len(r['latency_runs_ms'])} rounds; TVM {r['latency_ms']:.4f} ms on {r['threads']} thread(s), "
        f"PyTorch {r['torch_latency_ms']:.4f} ms on {r['torch_threads']} (fastest rounds); "
        f"load {r['load_before']:.2f} -> {r['load']:.2f}"
        f"{note}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="measurements per condition")
    parser.add_argument("--min-repeat-ms", type=float, default=100.0, help="how long each side runs per round")
    args = parser.parse_args()
    print(
        f"conv2d.json at {BINDINGS}, untuned, {os.cpu_count()} cores; load average now "
        f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}",
        flush=True,
    )
    quiet = runs(args.runs, args.min_repeat_ms, loaded=False)
    loaded = runs(args.runs, args.min_repeat_ms, loaded=True)
    speedups = [r["speedup"] for r in quiet + loaded]
    spread = max(speedups) / min(speedups)
    print(
        f"speedup over {len(speedups)} runs: {min(speedups):.3g}x to {max(speedups):.3g}x, spread {spread:.3f}x "
        f"(target at most {TARGET}x: {'met' if spread <= TARGET else 'NOT met'}); quiet median "
        f"{sorted(r['speedup'] for r in quiet)[len(quiet) // 2]:.3g}x, loaded median "
        f"{sorted(r['speedup'] for r in loaded)[len(loaded) // 2]:.3g}x"
    )


if __name__ == "__main__":
    main()
