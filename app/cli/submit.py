"""`tessera submit`: queue a measurement of an operator file on a device, for `tessera worker`;
or, with --doubtful, every measurement whose timing is in doubt again (core.compile.remeasure)."""

from __future__ import annotations

from pathlib import Path

from core.codegen.torch_plan import make_plan
from core.compile.remeasure import RemeasureDoubtful
from core.compile.requests import MeasureRequest
from core.devices import default_device, get_device
from core.errors import TesseraError
from core.ir.bindings import format_bindings
from core.jobs.queue import JobQueue
from core.jobs.submit import Subject, submit
from core.store import Store

from . import options
from .inputs import operator_and_bindings, transfer_sources


def add_parsers(sub) -> None:
    p = sub.add_parser("submit", help="queue a measurement of an operator file on a device")
    p.add_argument("file", metavar="FILE", nargs="?", help="the operator file (not with --doubtful)")
    p.add_argument(
        "--doubtful",
        action="store_true",
        help="queue again every measurement whose timing is in doubt (left out of rankings until one holds); "
        "best run by a worker while the machine is quiet",
    )
    options.bind(p)
    options.tune_trials(p, "MetaSchedule tuning trials (0: measure the default schedule)")
    options.device(p, "where to measure (`tessera device list`; default: the store's default device)")
    p.add_argument(
        "--variants",
        action="store_true",
        help="queue every algorithm that can run the operator (TVM's default; gspc, nchwc, im2col and "
        "winograd for convolutions), untuned and (with --tune-trials) tuned, to compare them",
    )
    options.transfer(
        p,
        "tune by reusing schedules tuned for kernels of the same class (transfer-tuning, on a CPU device) "
        "instead of searching",
    )
    options.store(p)
    p.set_defaults(func=cmd_submit)


def cmd_submit(args) -> int:
    if args.doubtful:
        return _doubtful(args)
    if args.file is None:
        raise TesseraError("tessera submit needs an operator FILE (or --doubtful)")
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


def _doubtful(args) -> int:
    """Every measurement in doubt queued again."""
    if args.file is not None:
        raise TesseraError("--doubtful measures again what is in the store; it takes no FILE")
    with Store(args.store) as store:
        queued = submit(store, RemeasureDoubtful())
    for note in queued.notes:
        print(f"note: {note}")
    print(
        f"queued {len(queued.ids)} measurement(s) in doubt again in {store.path}; run `tessera worker` on a quiet machine"
    )
    return 0
