"""`tessera codegen`, `tessera measure` and `tessera bench`: code, measurements, benchmarks.

This process never imports TVM or torch: TVMScript and measurements come from a
spawned process (core.jobs.isolate), benchmarks run as their own scripts.
Files and bindings are checked here first, so mistakes are reported at once."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.codegen import module_source
from core.codegen.torch_plan import make_plan
from core.ir.bindings import parse_bindings
from core.ir.errors import TesseraError
from core.ir.serialize import graph_from_document, read_document
from core.jobs.isolate import call_in_subprocess

BENCHMARKS = Path(__file__).resolve().parents[1] / "tests" / "benchmarks"


def add_parsers(sub) -> None:
    p = sub.add_parser("codegen", help="print an operator as PyTorch or TVMScript code")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--target", choices=("torch", "tvmscript"), default="torch")
    p.add_argument("--bind", default="", help="values such as C_in=64,H=56 (default: the file's own)")
    p.add_argument("--batch", type=int, default=1, help="batch size N of the TVM function (default 1)")
    p.set_defaults(func=cmd_codegen)

    p = sub.add_parser("measure", help="compile with TVM, check against PyTorch and time both (optionally tune)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--bind", default="", help="values such as C_in=64,C_out=64,H=56,W=56,K=3")
    p.add_argument("--tune-trials", type=int, default=0, metavar="N",
                   help="MetaSchedule trial budget (trials already in the tuning database count); 0: untuned")
    p.add_argument("--cost-model", choices=("xgb", "random"), default="xgb")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--tuning-dir", metavar="DIR", help="tuning databases folder (default ~/.cache/tessera/tuning)")
    p.add_argument("--repeat", type=int, default=10, help="timed repeats (median and spread over them)")
    p.add_argument("--min-repeat-ms", type=float, default=100.0, help="minimum length of one repeat")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.set_defaults(func=cmd_measure)

    p = sub.add_parser("bench", help="run a benchmark from tests/benchmarks (e.g. `tessera bench kernels`)")
    p.add_argument("name", metavar="NAME", help=f"one of: {', '.join(_benchmarks()) or 'none installed'}")
    p.set_defaults(func=cmd_bench)


def cmd_codegen(args) -> int:
    document = read_document(args.file)
    graph, bindings = graph_from_document(document, args.file), parse_bindings(args.bind)
    if args.target == "torch":
        print(module_source(graph, bindings), end="")
        return 0
    make_plan(graph, bindings)  # shape and binding errors, before spawning TVM
    print(call_in_subprocess("core.compile.jobs:tvmscript_call",
                             {"operator": document, "bindings": bindings, "batch": args.batch}))
    return 0


def cmd_measure(args) -> int:
    document = read_document(args.file)
    bindings = parse_bindings(args.bind)
    make_plan(graph_from_document(document, args.file), bindings)
    payload = {"operator": document, "bindings": bindings, "tune_trials": args.tune_trials, "device": "local",
               "cost_model": args.cost_model, "batch": args.batch, "repeat": args.repeat,
               "min_repeat_ms": args.min_repeat_ms}
    if args.tuning_dir:
        payload["tuning_root"] = str(Path(args.tuning_dir).resolve())
    result = call_in_subprocess("core.compile.jobs:measure_call", {"payload": payload}, on_progress=_progress)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        print(_report(args.file, result))
    return 0


def cmd_bench(args) -> int:
    script = BENCHMARKS / f"bench_{args.name}.py"
    if args.name not in _benchmarks():
        raise TesseraError(f"no benchmark {args.name!r} (available: {', '.join(_benchmarks()) or 'none'})")
    return subprocess.call([sys.executable, str(script)])


def _benchmarks() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in BENCHMARKS.glob("bench_*.py"))


def _progress(fraction: float, message: str) -> None:
    line = f"[{fraction:4.0%}] {message}"
    if sys.stderr.isatty():
        print(f"\r{line:<72}", end="", file=sys.stderr, flush=True)
    else:
        print(line, file=sys.stderr, flush=True)


def _report(path: str, r: dict) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in r["bindings"].items())
    tuned = (f"tuned, best of {r['trial_count']} trials ({r['new_trials']} new)" if r["tuned"]
             else "untuned (pass --tune-trials N to tune)")
    rows = [("", "median ms", "std ms", "GFLOP/s"),
            ("TVM", f"{r['latency_ms']:.4g}", f"{r['latency_std_ms']:.2g}", f"{r['gflops']:.3g}"),
            ("PyTorch", f"{r['torch_latency_ms']:.4g}", f"{r['torch_latency_std_ms']:.2g}",
             f"{r['torch_gflops']:.3g}")]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    table = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in rows]
    return "\n".join([
        f"{path}: {sizes}, batch {r['batch']}, {r['flops']:,} FLOPs, {r['threads']} threads",
        f"TVM kernel: {tuned}",
        *table,
        f"TVM / PyTorch speed-up: {r['speedup_vs_torch']:.2f}x",
        f"max abs error vs PyTorch: {r['max_abs_error']:.2g}",
    ])
