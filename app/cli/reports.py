"""What several commands print alike: progress lines, plain tables, a measurement."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from core.compile.algorithms import auto_summary
from core.store.measurement import speedup_text


def print_progress(fraction: float, message: str) -> None:
    """One progress line on stderr, rewritten in place on a terminal."""
    line = f"[{fraction:4.0%}] {message}"
    if sys.stderr.isatty():
        print(f"\r{line:<72}", end="", file=sys.stderr, flush=True)
    else:
        print(line, file=sys.stderr, flush=True)


def end_progress() -> None:
    """After print_progress: leave its last line on a terminal."""
    if sys.stderr.isatty():
        print(file=sys.stderr)


def table_lines(rows: Sequence[Sequence[str]], right: tuple[int, ...] = ()) -> list[str]:
    """Rows as aligned columns, left-aligned but for the `right` ones (numbers)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in rows
    ]


def faster_text(speedup: float, low: float | None = None, high: float | None = None) -> str:
    """A speedup with its interval (speedup_text) and which way it goes: '1.25x faster', or
    below 1 turned over, '1.05x [1.01, 1.10] slower' (as core.search.report says a ratio)."""
    if speedup >= 1:
        return f"{speedup_text(speedup, low, high)} faster"
    turned = (None, None) if low is None or high is None else (1 / high, 1 / low)
    return f"{speedup_text(1 / speedup, *turned)} slower"


def print_table(rows: Sequence[Sequence[str]]) -> None:
    for line in table_lines(rows):
        print(line)


def thread_count(threads: int | None) -> str:
    """A result's thread count for a table ('?' where the device did not say)."""
    return "?" if threads is None else str(threads)


def measurement_report(path: str, r: dict) -> str:
    """A measurement's result (core.compile.handlers' dict) as `tessera measure` prints it."""
    sizes = ", ".join(f"{k}={v}" for k, v in r["bindings"].items())
    schedule = r["algorithm_details"].get("schedule")  # an algorithm that says whose schedule ran
    if r["tuned"]:
        tuned = f"tuned, best of {r['trial_count']} trials ({r['new_trials']} new)"
    elif r["trial_count"]:
        kept = f"{schedule} schedule" if schedule else "TVM's default"
        tuned = f"{r['schedule_source']}, after {r['trial_count']} trials: {kept} kept"
    else:
        tuned = "untuned (pass --tune-trials N to tune)"
    rows = [
        ("", "fastest ms", "std ms", "GFLOP/s", "threads"),
        (
            "TVM",
            f"{r['latency_ms']:.4g}",
            f"{r['latency_std_ms']:.2g}",
            f"{r['gflops']:.3g}",
            thread_count(r["threads"]),
        ),
    ]
    if r["torch_latency_ms"] is not None:  # not timed for an RPC device
        rows.append(
            (
                "PyTorch",
                f"{r['torch_latency_ms']:.4g}",
                f"{r['torch_latency_std_ms']:.2g}",
                f"{r['torch_gflops']:.3g}",
                thread_count(r.get("torch_threads")),
            )
        )
    return "\n".join(
        [
            f"{path}: {sizes}, batch {r['batch']}, {r['flops']:,} FLOPs"
            + ("" if r.get("load") is None else f", timed at load {r['load']:.1f}"),
            f"TVM kernel: {tuned}",
            *table_lines(rows, right=(1, 2, 3, 4)),
            (
                f"TVM / PyTorch speed-up: {speedup_text(r['speedup'], r.get('speedup_low'), r.get('speedup_high'))}"
                + (" (median of interleaved rounds, 95% interval)" if r.get("speedup_low") is not None else "")
                if r["speedup"] is not None
                else "PyTorch not timed: it runs on this machine, not on the device"
            ),
            f"max abs error vs PyTorch: {r['max_abs_error']:.2g}",
            f"algorithm {r['algorithm']}, layout {r['layout']}, schedule {schedule or r['schedule_source']}",
            *([auto] if (auto := auto_summary(r["algorithm_details"])) else []),
            *([r["timing_note"]] if r.get("timing_note") else []),
        ]
    )
