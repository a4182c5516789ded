"""`tessera codegen`, `tessera measure` and `tessera bench`: code, measurements, benchmarks.

This process never imports TVM or torch: TVMScript and measurements come from a
spawned process (core.jobs.isolate), benchmarks run as their own scripts.
Files and bindings are checked here first, so mistakes are reported at once."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from app.cli_inputs import measured_operator, operator_and_bindings
from core.codegen import module_source
from core.codegen.torch_plan import make_plan
from core.compile.algorithms import ALGORITHMS, SEQUENCE, algorithm, auto_summary
from core.compile.payloads import MeasurePayload
from core.compile.requests import variant_payloads
from core.devices import get_device
from core.ir.errors import TesseraError
from core.ir.graph import OperatorGraph
from core.jobs.isolate import call_in_subprocess
from core.store import Store

BENCHMARKS = Path(__file__).resolve().parents[1] / "tests" / "benchmarks"


def add_parsers(sub) -> None:
    p = sub.add_parser("codegen", help="print an operator as PyTorch or TVMScript code")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--target", choices=("torch", "tvmscript"), default="torch")
    p.add_argument("--bind", default="", help="values such as C_in=64,H=56 (default: the file's own)")
    p.add_argument("--batch", type=int, default=1, help="batch size N of the TVM function (default 1)")
    p.set_defaults(func=cmd_codegen)

    p = sub.add_parser("measure", help="compile with TVM, check against PyTorch and time both (optionally tune)")
    p.add_argument("file", metavar="FILE", help="an operator, or a sequence (the operator its steps make)")
    p.add_argument("--bind", default="", help="values such as C_in=64,C_out=64,H=56,W=56,K=3")
    p.add_argument(
        "--tune-trials",
        type=int,
        default=0,
        metavar="N",
        help="MetaSchedule trial budget (trials already in the tuning database count); 0: untuned",
    )
    p.add_argument("--batch", type=int, default=1)
    add_timing_options(p)
    p.add_argument(
        "--device",
        metavar="NAME",
        help="an RPC device of the store (`tessera device list`) to tune and time on (default: this machine)",
    )
    p.add_argument("--store", metavar="PATH", help="with --device: the results store listing it")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.add_argument(
        "--algorithm",
        choices=tuple(ALGORITHMS),
        help="; ".join(f"{a.name}: {a.description}" for a in ALGORITHMS.values())
        + " (default: default, or sequence for a sequence FILE)",
    )
    p.add_argument(
        "--tiles",
        metavar="T_O,T_I",
        help="gspc's tile sizes (default: the SIMD width, or the "
        "tuning grid's best with --tune-trials, which then caps the grid points measured)",
    )
    p.add_argument(
        "--variants",
        action="store_true",
        help="measure every algorithm, untuned and (with --tune-trials) tuned, and compare them in one table",
    )
    p.set_defaults(func=cmd_measure)

    p = sub.add_parser("bench", help="run a benchmark from tests/benchmarks (e.g. `tessera bench kernels`)")
    p.add_argument("name", metavar="NAME", help=f"one of: {', '.join(_benchmarks()) or 'none installed'}")
    p.add_argument("options", nargs=argparse.REMAINDER, help="passed to the benchmark, e.g. `kernels --quick`")
    p.set_defaults(func=cmd_bench)


def add_timing_options(p) -> None:
    """How kernels are tuned and timed, for `tessera measure` and `tessera tune`."""
    p.add_argument(
        "--cost-model", choices=("xgb", "random"), default="xgb", help="MetaSchedule's cost model (default xgb)"
    )
    p.add_argument("--tuning-dir", metavar="DIR", help="tuning databases folder (default ~/.cache/tessera/tuning)")
    p.add_argument(
        "--repeat",
        type=int,
        default=10,
        help="timed repeats of the kernel kept (median and spread over them; default 10)",
    )
    p.add_argument("--min-repeat-ms", type=float, default=100.0, help="minimum length of one repeat (default 100)")


def cmd_codegen(args) -> int:
    document, graph, bindings = operator_and_bindings(args.file, args.bind)
    if args.target == "torch":
        print(module_source(graph, bindings), end="")
        return 0
    make_plan(graph, bindings)  # shape and binding errors, before spawning TVM
    print(
        call_in_subprocess(
            "core.compile.handlers:tvmscript_call", {"operator": document, "bindings": bindings, "batch": args.batch}
        )
    )
    return 0


def cmd_measure(args) -> int:
    document, graph, bindings, sequence = measured_operator(args.file, args.bind)
    make_plan(graph, bindings)
    chosen = args.algorithm or (SEQUENCE if sequence else "default")
    device = {}
    if args.device:
        if args.variants:
            raise TesseraError(
                "--variants compares every variant with PyTorch on this machine; with --device, "
                "measure the variants one at a time (--algorithm, --tune-trials)"
            )
        with Store(args.store) as store:
            device = get_device(store, args.device).job_fields()
    payload = MeasurePayload(
        document,
        bindings,
        tune_trials=args.tune_trials,
        cost_model=args.cost_model,
        batch=args.batch,
        repeat=args.repeat,
        min_repeat_ms=args.min_repeat_ms,
        algorithm=chosen,
        sequence=sequence,
        tuning_root=str(Path(args.tuning_dir).resolve()) if args.tuning_dir else None,
        tiles=_tiles(args.tiles) if args.tiles else None,
        **device,
    )
    if args.variants:
        return _measure_variants(args, payload, graph)
    algorithm(chosen).check(graph, {**graph.bindings, **bindings})  # before spawning TVM
    result = call_in_subprocess(
        "core.compile.handlers:measure_call", {"payload": payload.to_dict()}, on_progress=print_progress
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        print(measurement_report(args.file, result))
    return 0


def _measure_variants(args, payload: MeasurePayload, graph: OperatorGraph) -> int:
    """Every variant one after another (core.compile.requests.variant_payloads), then one table."""
    payloads, skipped = variant_payloads(payload, graph)
    results = []
    for variant in payloads:
        label = _variant(variant)
        results.append(
            call_in_subprocess(
                "core.compile.handlers:measure_call",
                {"payload": variant.to_dict()},
                on_progress=lambda f, m, label=label: print_progress(f, f"{label}: {m}"),
            )
        )
        if sys.stderr.isatty():
            print(file=sys.stderr)
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    first = results[0]
    rows = [("variant", "layout", "median ms", "std ms", "GFLOP/s", "vs PyTorch", f"vs {_variant(payloads[0])}")]
    rows += [
        (
            _variant(p),
            r["layout"],
            f"{r['latency_ms']:.4g}",
            f"{r['latency_std_ms']:.2g}",
            f"{r['gflops']:.3g}",
            f"{r['speedup']:.2f}x",
            f"{first['latency_ms'] / r['latency_ms']:.2f}x",
        )
        for p, r in zip(payloads, results)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    sizes = ", ".join(f"{k}={v}" for k, v in first["bindings"].items())
    print(f"{args.file}: {sizes}, batch {first['batch']}, {first['flops']:,} FLOPs, {first['threads']} threads")
    for row in rows:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    print(f"PyTorch module: {first['torch_latency_ms']:.4g} ms")
    fastest = min(zip(payloads, results), key=lambda pair: pair[1]["latency_ms"])
    print(f"auto would keep: {_variant(fastest[0])} (the fastest here)")
    for note in (skipped, "" if args.tune_trials else "pass --tune-trials N to add the tuned variants"):
        if note:
            print(f"note: {note}")
    return 0


def _variant(payload: MeasurePayload) -> str:
    return f"{payload.algorithm} {'tuned' if payload.tune_trials else 'untuned'}"


def _tiles(text: str) -> tuple[int, int]:
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise TesseraError(f"--tiles takes two positive integers T_O,T_I such as 8,4; got {text!r}")
    return int(parts[0]), int(parts[1])


def cmd_bench(args) -> int:
    script = BENCHMARKS / f"bench_{args.name}.py"
    if args.name not in _benchmarks():
        raise TesseraError(f"no benchmark {args.name!r} (available: {', '.join(_benchmarks()) or 'none'})")
    command = [sys.executable, "-m", f"tests.benchmarks.{script.stem}", *args.options]
    return subprocess.call(command, cwd=BENCHMARKS.parents[1])


def _benchmarks() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in BENCHMARKS.glob("bench_*.py"))


def print_progress(fraction: float, message: str) -> None:
    line = f"[{fraction:4.0%}] {message}"
    if sys.stderr.isatty():
        print(f"\r{line:<72}", end="", file=sys.stderr, flush=True)
    else:
        print(line, file=sys.stderr, flush=True)


def measurement_report(path: str, r: dict) -> str:
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
        ("", "median ms", "std ms", "GFLOP/s"),
        ("TVM", f"{r['latency_ms']:.4g}", f"{r['latency_std_ms']:.2g}", f"{r['gflops']:.3g}"),
    ]
    if r["torch_latency_ms"] is not None:  # not timed for an RPC device
        rows.append(
            ("PyTorch", f"{r['torch_latency_ms']:.4g}", f"{r['torch_latency_std_ms']:.2g}", f"{r['torch_gflops']:.3g}")
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    table = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in rows]
    return "\n".join(
        [
            f"{path}: {sizes}, batch {r['batch']}, {r['flops']:,} FLOPs, {r['threads']} threads",
            f"TVM kernel: {tuned}",
            *table,
            (
                f"TVM / PyTorch speed-up: {r['speedup']:.2f}x"
                if r["speedup"] is not None
                else "PyTorch not timed: it runs on this machine, not on the device"
            ),
            f"max abs error vs PyTorch: {r['max_abs_error']:.2g}",
            f"algorithm {r['algorithm']}, layout {r['layout']}, schedule {schedule or r['schedule_source']}",
            *([auto] if (auto := auto_summary(r["algorithm_details"])) else []),
            *([r["timing_note"]] if r.get("timing_note") else []),
        ]
    )
