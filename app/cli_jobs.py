"""`tessera submit`, `worker`, `jobs` and `results`: the job queue and the results store
on the command line. The store is --store PATH, else $TESSERA_STORE, else the default."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from app.cli_inputs import operator_and_bindings, transfer_sources
from core.codegen.torch_plan import make_plan
from core.compile.requests import MeasureRequest
from core.devices import default_device, get_device
from core.ir.bindings import format_bindings
from core.ir.errors import TesseraError
from core.jobs.executors import EXECUTORS, choose_executor
from core.jobs.outcomes import take_back_orphans
from core.jobs.queue import JobQueue
from core.jobs.submit import Subject, submit
from core.jobs.supervisor import Supervisor, default_worker_count
from core.store import MAXIMIZE, MINIMIZE, RESULT_OBJECTIVES, Store
from core.store.result_filter import parse_filter
from core.store.variants import HEADER as VARIANT_HEADER
from core.store.variants import read_variants

RESULT_COLUMNS = (
    "measurement_id",
    "operator_name",
    "device_name",
    "bindings",
    "latency_ms",
    "gflops",
    "tuned",
    "speedup",
    "accuracy",
)


def add_parsers(sub) -> None:
    p = sub.add_parser("submit", help="queue a measurement of an operator file on a device")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--bind", default="", help="values such as C_in=64,H=56 (default: the file's own)")
    p.add_argument(
        "--tune-trials",
        type=int,
        default=0,
        metavar="N",
        help="MetaSchedule tuning trials (0: measure the default schedule)",
    )
    p.add_argument(
        "--device", metavar="NAME", help="where to measure (`tessera device list`; default: the store's default device)"
    )
    p.add_argument(
        "--variants",
        action="store_true",
        help="queue every algorithm that can run the operator (TVM's default; gspc, nchwc, im2col and "
        "winograd for convolutions), untuned and (with --tune-trials) tuned, to compare them",
    )
    p.add_argument(
        "--transfer",
        action="store_true",
        help="tune by reusing schedules tuned for kernels of the "
        "same class (transfer-tuning, on a CPU device) instead of searching",
    )
    p.add_argument(
        "--from",
        dest="sources",
        action="append",
        metavar="STORE_OR_DIR",
        help="with --transfer: a tuning folder or results store to take schedules from (repeatable; "
        "default: the tuning folder)",
    )
    p.add_argument(
        "--top-k",
        type=int,
        default=1,
        metavar="K",
        help="with --transfer: schedules tried per tuned kernel, fastest first (default 1)",
    )
    _store_option(p)
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("worker", help="run queued jobs in worker processes, or on a Ray cluster")
    p.add_argument(
        "--n",
        type=int,
        default=default_worker_count(),
        metavar="N",
        help="number of local worker processes (default: CPU count - 1)",
    )
    p.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local: worker processes run every job (default); ray: fisher and train jobs run as "
        "Ray tasks, the others in local workers",
    )
    p.add_argument(
        "--address",
        metavar="HOST:PORT",
        help="with --executor ray: the head of a running Ray cluster (default: start a local "
        "Ray instance for this session)",
    )
    p.add_argument(
        "--forever", action="store_true", help="keep waiting for new jobs (default: stop when none are left)"
    )
    _store_option(p)
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("jobs", help="list jobs, or cancel or retry one")
    p.add_argument("action", nargs="?", default="list", choices=("list", "cancel", "retry"))
    p.add_argument("job_id", nargs="?", type=int, metavar="ID")
    _store_option(p)
    p.set_defaults(func=cmd_jobs)

    p = sub.add_parser("results", help="measurements, or their Pareto front")
    p.add_argument(
        "--pareto",
        metavar="COLUMNS",
        help=f"two or three of {', '.join(RESULT_OBJECTIVES)}, comma-separated; "
        "add :min or :max to override the direction, e.g. latency_ms,accuracy:max",
    )
    p.add_argument(
        "--variants",
        type=int,
        metavar="ID",
        help="compare every measurement of measurement ID's "
        "operator on its device at its sizes: algorithm, layout, untuned/tuned/reused schedule",
    )
    p.add_argument(
        "--filter",
        metavar="TEXT",
        default="",
        help="the explorer's filter: words search names, origins, devices and bindings; terms compare "
        'a column, e.g. "latency<2 accuracy >= 0.9 origin=baseline name~conv"',
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _store_option(p)
    p.set_defaults(func=cmd_results)


def _store_option(p) -> None:
    p.add_argument(
        "--store",
        metavar="PATH",
        help="results store file (default: $TESSERA_STORE or ~/.local/share/tessera/results.db)",
    )


def cmd_submit(args) -> int:
    if args.tune_trials < 0:
        raise TesseraError(f"--tune-trials must be 0 or more, got {args.tune_trials}")
    sources = transfer_sources(args.sources, args.transfer)
    if args.transfer and args.tune_trials:
        raise TesseraError("--tune-trials sets the budget of a schedule search; --transfer reuses schedules instead")
    doc, graph, given = operator_and_bindings(args.file, args.bind)
    bindings = {**graph.bindings, **given}
    make_plan(graph, bindings)  # shape and binding errors now, not in the worker
    name = doc.get("name") or Path(args.file).stem
    with Store(args.store) as store:
        device = get_device(store, args.device) if args.device else default_device(store)
        request = MeasureRequest(
            (Subject(doc, name, bindings=bindings, input_key=str(Path(args.file).resolve()), parsed=graph),),
            device.name,
            trials=args.tune_trials,
            variants=args.variants,
            transfer=args.transfer,
            top_k=args.top_k,
            sources=tuple(sources),
        )
        queued = submit(store, request)
        queue = JobQueue(store)
        for job_id in queued.ids:
            job = queue.get(job_id)
            print(
                f"queued job {job_id}: {_describe(job.kind, job.payload, args.variants)} {name} with "
                f"{format_bindings(bindings) or 'no bindings'} on device {device.name}"
            )
    for note in queued.notes:
        print(f"note: {note.removeprefix(name + ': ')}")
    print(f"in {store.path}; run `tessera worker` to process {'them' if len(queued.ids) > 1 else 'it'}")
    return 0


def _describe(kind: str, payload: dict, variants: bool) -> str:
    """'measure', 'tune (32 trials)', 'measure gspc' (comparing variants), 'transfer-tune'."""
    if kind == "transfer":
        return "transfer-tune"
    what = f"tune ({payload['tune_trials']} trials)" if payload["tune_trials"] else "measure"
    return f"{what} {payload['algorithm']}" if variants else what


def cmd_worker(args) -> int:
    if args.n < 1:
        raise TesseraError(f"--n must be at least 1, got {args.n}")
    supervisor = Supervisor(args.store, workers=args.n, ray=choose_executor(args.executor, args.address))
    print(
        f"{args.n} worker(s) on {supervisor.store.path}"
        + ("; Ctrl-C to stop" if args.forever else "; stopping when no jobs are left"),
        flush=True,
    )
    if args.executor != "local":
        print(f"runners: {supervisor.describe()}", flush=True)
    supervisor.run(forever=args.forever, report=lambda line: print(line, flush=True))
    return 0


def cmd_jobs(args) -> int:
    with Store(args.store) as store:
        queue = JobQueue(store)
        if args.action == "list":
            if not (store.damage or store.read_only):  # jobs of workers that are gone are not shown running
                for line in take_back_orphans(queue):
                    print(line, file=sys.stderr)
            rows = [("id", "kind", "state", "tries", "progress", "operator", "where", "note")]
            for job in queue.jobs():
                rows.append(
                    (
                        str(job.id),
                        job.kind,
                        job.state,
                        f"{job.attempts}/{job.max_attempts}",
                        job.progress_text(time.time()),
                        job.operator_name or "-",
                        job.runs_on or "-",
                        job.error or job.message or "",
                    )
                )
            _print_table(rows)
            return 0
        if args.job_id is None:
            raise TesseraError(f"`tessera jobs {args.action}` needs a job id, e.g. `tessera jobs {args.action} 7`")
        if args.action == "cancel":
            if queue.cancel(args.job_id):
                print(f"cancelled {queue.get(args.job_id).describe()}")
                return 0
            job = queue.get(args.job_id)
            print(f"{job.describe()} has already ended ({job.state})")
            return 1
        queue.retry(args.job_id)
        print(f"queued {queue.get(args.job_id).describe()} again")
        return 0


def cmd_results(args) -> int:
    if args.variants is not None:
        return _print_variants(args)
    where = parse_filter(args.filter)
    with Store(args.store) as store:
        if store.salvage_note():
            print(f"warning: {store.salvage_note()}", file=sys.stderr)
        if args.pareto:
            columns, directions = _parse_objectives(args.pareto)
            rows = store.pareto(columns, directions, where)
            shown = ("measurement_id", "operator_name", "device_name", "bindings", *columns)
        else:
            rows, shown = list(store.results(where.where or None, where.args)), RESULT_COLUMNS
    if args.json:
        print(json.dumps([{**row, "bindings": json.loads(row["bindings"] or "{}")} for row in rows], indent=2))
        return 0
    if not rows:
        print("no results match the filter" if where else "no results yet")
        return 0
    table = [tuple("id" if c == "measurement_id" else c.removesuffix("_name") for c in shown)]
    table += [tuple(_cell(row[c]) for c in shown) for row in rows]
    _print_table(table)
    return 0


def _print_variants(args) -> int:
    if args.pareto:
        raise TesseraError("give --variants ID or --pareto COLUMNS, not both")
    with Store(args.store) as store:
        variants = read_variants(store, args.variants)
    if args.json:
        print(
            json.dumps(
                {**asdict(variants), "rows": [{**asdict(v), "vs_torch": v.vs_torch} for v in variants.rows]}, indent=2
            )
        )
        return 0
    print(variants.title())
    _print_table([VARIANT_HEADER, *variants.table()])
    return 0


def _parse_objectives(text: str) -> tuple[list[str], list[str]]:
    """'latency_ms,accuracy:max' -> (['latency_ms', 'accuracy'], ['min', 'max'])."""
    columns, directions = [], []
    for item in filter(None, (part.strip() for part in text.split(","))):
        column, _, direction = item.partition(":")
        if direction not in ("", MINIMIZE, MAXIMIZE):
            raise TesseraError(f"--pareto {item!r}: the direction after ':' must be min or max")
        columns.append(column)
        directions.append(direction or RESULT_OBJECTIVES.get(column, MINIMIZE))
    return columns, directions


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str) and value.startswith("{"):
        return format_bindings(json.loads(value))
    return str(value)


def _print_table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
