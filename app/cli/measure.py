"""`tessera measure`: compile an operator (or the operator a sequence makes) with TVM, check it
against PyTorch and time both, optionally tuned; or every algorithm's variant in one table.

The work runs in a spawned process (core.jobs.isolate): this one never imports TVM or torch.
Files and bindings are checked here first, so mistakes are reported at once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.codegen.torch_plan import make_plan
from core.compile.algorithms import ALGORITHMS, SEQUENCE, algorithm
from core.compile.build_time import slow_build_note
from core.compile.payloads import MeasurePayload
from core.compile.requests import variant_payloads
from core.devices import get_device
from core.errors import TesseraError
from core.ir.graph import OperatorGraph
from core.jobs.isolate import call_in_subprocess
from core.store import Store
from core.store.measurement import speedup_text

from . import options
from .inputs import measured_operator
from .reports import end_progress, measurement_report, print_progress, table_lines, thread_count


def add_parsers(sub) -> None:
    p = sub.add_parser("measure", help="compile with TVM, check against PyTorch and time both (optionally tune)")
    p.add_argument("file", metavar="FILE", help="an operator, or a sequence (the operator its steps make)")
    options.bind(p, "values such as C_in=64,C_out=64,H=56,W=56,K=3")
    options.tune_trials(p, "MetaSchedule trial budget (trials already in the tuning database count); 0: untuned")
    p.add_argument("--batch", type=int, default=1)
    options.timing(p)
    options.device(p, "an RPC device of the store (`tessera device list`) to tune and time on (default: this machine)")
    options.store(p, "with --device: the results store listing it")
    options.json_output(p, "print the whole result as JSON")
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
    note = slow_build_note(graph, "Ctrl-C cancels it")
    if note:
        print(f"note: {note}", file=sys.stderr, flush=True)
    if args.variants:
        return _measure_variants(args, payload, graph)
    algorithm(chosen).check(graph, {**graph.bindings, **bindings})  # before spawning TVM
    result = call_in_subprocess(
        "core.compile.handlers:measure_call", {"payload": payload.to_dict()}, on_progress=print_progress
    )
    end_progress()
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

        def progress(fraction: float, message: str, label: str = label) -> None:
            print_progress(fraction, f"{label}: {message}")

        results.append(
            call_in_subprocess(
                "core.compile.handlers:measure_call", {"payload": variant.to_dict()}, on_progress=progress
            )
        )
        end_progress()
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    first = results[0]
    header = (
        "variant",
        "layout",
        "fastest ms",
        "std ms",
        "GFLOP/s",
        "threads",
        "vs PyTorch",
        f"vs {_variant(payloads[0])}",
    )
    rows = [header]
    rows += [
        (
            _variant(p),
            r["layout"],
            f"{r['latency_ms']:.4g}",
            f"{r['latency_std_ms']:.2g}",
            f"{r['gflops']:.3g}",
            thread_count(r["threads"]),
            speedup_text(r["speedup"], r["speedup_low"], r["speedup_high"]),
            f"{first['latency_ms'] / r['latency_ms']:.2f}x",
        )
        for p, r in zip(payloads, results)
    ]
    sizes = ", ".join(f"{k}={v}" for k, v in first["bindings"].items())
    print(f"{args.file}: {sizes}, batch {first['batch']}, {first['flops']:,} FLOPs")
    for line in table_lines(rows, right=(2, 3, 4, 5, 6, 7)):
        print(line)
    print(f"PyTorch module: {first['torch_latency_ms']:.4g} ms on {thread_count(first['torch_threads'])} thread(s)")
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
