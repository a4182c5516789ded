"""`tessera tune`: tune an operator or a backbone's kernels, from scratch or by reusing
tuned schedules of the same kernel class (transfer-tuning, core.compile.transfer).

This process never imports TVM or torch: the work runs in a spawned process
(core.jobs.isolate), or, for an operator with --store, as a job of a worker process
whose result lands in that store as a measurement (schedule_source 'transfer:...').
Files, bindings and paths are checked here first, so mistakes are reported at once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.codegen.torch_plan import make_plan
from core.compile.requests import MeasureRequest
from core.data.specs import BACKBONE_NAMES, BackboneSpec
from core.devices import LOCAL, LOCAL_NAME, get_device
from core.errors import TesseraError
from core.jobs.isolate import call_in_subprocess
from core.jobs.queue import DONE, JobQueue
from core.jobs.registry import handlers
from core.jobs.submit import Subject, submit
from core.jobs.supervisor import Supervisor
from core.store import Store

from . import options
from .inputs import operator_and_bindings, transfer_sources
from .reports import end_progress, measurement_report, print_progress, table_lines

DEFAULT_TRIALS = 64


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "tune",
        help="tune an operator or a backbone's kernels: from scratch (--trials N), "
        "or by reusing tuned schedules of the same kernel class (--transfer)",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="an operator file (or give --backbone)")
    p.add_argument("--backbone", choices=BACKBONE_NAMES, help="tune this network's kernels instead of an operator")
    p.add_argument("--width", type=int, default=16, help="backbone: channels of the first stage (default 16)")
    p.add_argument("--resolution", type=int, default=16, help="backbone: input side in pixels (default 16)")
    p.add_argument(
        "--only",
        metavar="PARTS",
        help="backbone: only kernels whose name contains one of these comma-separated parts, e.g. conv2d",
    )
    options.bind(p, "operator: values such as C_in=64,H=56 (default: the file's own)")
    options.transfer(
        p,
        "reuse tuned schedules of the same kernel classes instead of tuning from scratch",
        "a tuning-databases folder or a results store to take schedules from; "
        "repeat it to let the source-selection heuristic pick one (default: the tuning folder)",
    )
    p.add_argument(
        "--trials",
        type=int,
        metavar="N",
        help=f"from scratch: MetaSchedule trial budget, trials "
        f"already in the database counting (default {DEFAULT_TRIALS}; a backbone's kernels share it)",
    )
    options.timing(p)
    options.device(p, "operator: an RPC device of the store (`tessera device list`) to tune on (default: this machine)")
    options.store(
        p,
        "operator: run as a job and record the measurement in this results store (with --device: the store listing it)",
    )
    options.json_output(p, "print the whole result as JSON")
    p.set_defaults(func=cmd_tune)


def cmd_tune(args) -> int:
    _check(args)
    result = _tune_backbone(args) if args.backbone else _tune_operator(args)
    end_progress()
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    elif args.backbone:
        print(_network_report(result))
    else:
        print(_transfer_report(args.file, result) if args.transfer else measurement_report(args.file, result))
    return 0


def _check(args) -> None:
    if (args.file is None) == (args.backbone is None):
        raise TesseraError("give an operator FILE or --backbone NAME (one of them)")
    if args.transfer and args.trials is not None:
        raise TesseraError("--trials sets the budget of tuning from scratch; --transfer reuses schedules instead")
    if args.backbone and (args.store or args.device):
        raise TesseraError("--store and --device apply to an operator; a backbone's kernels are tuned here and printed")
    for option, value in (("--trials", args.trials), ("--top-k", args.top_k), ("--repeat", args.repeat)):
        if value is not None and value < 1:
            raise TesseraError(f"{option} must be at least 1, got {value}")


def _common(args) -> dict:
    """What a backbone's tuning takes besides the network: where and how to tune."""
    sources = transfer_sources(args.sources, args.transfer)
    payload: dict = {}
    if args.tuning_dir:
        payload["tuning_root"] = str(Path(args.tuning_dir).expanduser().resolve())
    if args.transfer:
        payload["top_k"] = args.top_k
        if sources:
            payload["sources"] = sources
    else:
        payload["cost_model"] = args.cost_model
    return payload


def _tune_operator(args) -> dict:
    document, graph, bindings = operator_and_bindings(args.file, args.bind)
    make_plan(graph, bindings)  # shape and binding errors, before TVM
    name = document.get("name") or Path(args.file).stem
    request = MeasureRequest(
        (Subject(document, name, bindings=bindings, input_key=str(Path(args.file).resolve()), parsed=graph),),
        args.device or LOCAL_NAME,
        trials=0 if args.transfer else args.trials or DEFAULT_TRIALS,
        transfer=args.transfer,
        sources=tuple(transfer_sources(args.sources, args.transfer)),
        top_k=args.top_k,
        cost_model=args.cost_model,
        repeat=args.repeat,
        min_repeat_ms=args.min_repeat_ms,
        tuning_root=str(Path(args.tuning_dir).expanduser().resolve()) if args.tuning_dir else None,
    )
    if args.store:
        return _run_as_job(args, request)
    device = LOCAL
    if args.device:
        with Store(args.store) as store:
            device = get_device(store, args.device)
    [payload], _ = request.payloads(request.subjects[0], bindings, device)
    return call_in_subprocess(
        f"core.compile.handlers:{payload.kind}_call", {"payload": payload.to_dict()}, on_progress=print_progress
    )


def _run_as_job(args, request: MeasureRequest) -> dict:
    """Queue the job in the store and run it in one worker process (which takes only this kind)."""
    with Store(args.store) as store:
        [job_id] = submit(store, request).ids
        kind = JobQueue(store).get(job_id).kind
        path = store.path
    print(f"queued job {job_id} ({kind} {request.subjects[0].name}) in {path}", file=sys.stderr)
    Supervisor(path, workers=1, handlers={kind: handlers()[kind]}).run(
        report=lambda line: print(line, file=sys.stderr, flush=True)
    )
    with Store(path) as store:
        job = JobQueue(store).get(job_id)
    if job.state != DONE or job.result is None:
        raise TesseraError(f"{job.describe()} {job.state}: {job.error}")
    return job.result


def _tune_backbone(args) -> dict:
    spec = BackboneSpec(args.backbone, args.width, args.resolution)  # checked here, built in the worker
    payload = {
        **_common(args),
        "backbone": spec.name,
        "width": spec.width,
        "resolution": spec.resolution,
        "mode": "transfer" if args.transfer else "scratch",
        "only": [part.strip() for part in (args.only or "").split(",") if part.strip()],
    }
    if not args.transfer:
        payload["trials"] = args.trials or DEFAULT_TRIALS
    return call_in_subprocess(
        "core.networks.backbone_tuning:network_call", {"payload": payload}, on_progress=print_progress
    )


def _transfer_report(path: str, r: dict) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in r["bindings"].items())
    t = r["transfer"]
    lines = [
        f"{path}: {sizes}, batch {r['batch']}, {r['flops']:,} FLOPs, {r['threads']} threads",
        f"kernel class {t['kernel_class']}: {t['found']} tuned schedules found, {t['applied']} applied, "
        f"{t['skipped']} skipped",
    ]
    lines += [f"  skipped {count}: {reason}" for reason, count in t["skip_reasons"].items()]
    lines += [
        f"  source {s['source']}: score {s['score']:.3g} ({s['tuned_kernels']} tuned kernels of this class)"
        for s in t["sources_ranked"]
        if len(t["sources_ranked"]) > 1
    ]
    kept = r["schedule_source"] if r["tuned"] else "the untuned default (no reused schedule beat it)"
    torch = (
        f", PyTorch {r['torch_latency_ms']:.4g} ms: TVM / PyTorch speed-up {r['speedup']:.2f}x"
        if r["torch_latency_ms"] is not None
        else " (on the device; PyTorch is not timed there)"
    )
    lines += [
        f"kept: {kept}",
        f"TVM {r['latency_ms']:.4g} ms (std {r['latency_std_ms']:.2g}){torch}",
        f"speed-up over untuned: {t['speedup_vs_untuned']:.2f}x (screening timings); search {t['search_s']:.1f} s",
        f"max abs error vs PyTorch: {r['max_abs_error']:.2g}",
        *([r["timing_note"]] if r.get("timing_note") else []),
    ]
    return "\n".join(lines)


def _network_report(r: dict) -> str:
    tuned = "transferred" if r["mode"] == "transfer" else "tuned"
    rows = [("kernel", "calls", "untuned ms", f"{tuned} ms", "speed-up", "schedule")]
    for k in r["kernels"]:
        after = k.get("transfer_ms", k.get("tuned_ms"))
        rows.append(
            (
                k["kernel"],
                str(k["weight"]),
                f"{k['untuned_ms']:.4g}",
                f"{after:.4g}",
                f"{k['untuned_ms'] / after:.2f}x",
                k.get("schedule") or ("-" if r["mode"] == "transfer" else ""),
            )
        )
    lines = [f"{r['network']}: {len(r['kernels'])} kernels", *table_lines(rows, right=(1, 2, 3, 4))]
    lines.append(
        f"kernel time {r['untuned_ms']:.4g} ms untuned -> {r['tuned_ms']:.4g} ms {tuned}: "
        f"{r['speedup_vs_untuned']:.2f}x; search {r['search_s']:.1f} s"
    )
    if r["mode"] == "transfer":
        lines.append(f"{r['found']} schedules found, {r['applied']} applied, {r['skipped']} skipped")
        lines += [f"  skipped {count}: {reason}" for reason, count in r["skip_reasons"].items()]
        lines += [
            f"  source {s['source']}: score {s['score']:.3g} ({s['tuned_kernels']} tuned kernels of its classes)"
            for s in r["sources_ranked"]
            if len(r["sources_ranked"]) > 1
        ]
    else:
        lines.append(f"{r['trials']} trials in {r['tuning_dir']} ({r['new_trials']} new)")
    return "\n".join(lines)
