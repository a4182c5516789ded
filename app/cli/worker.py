"""`tessera worker`: run queued jobs in worker processes, or on a Ray cluster."""

from __future__ import annotations

from core.compile.remeasure import when_quiet
from core.errors import TesseraError
from core.jobs.executors import EXECUTORS, choose_executor
from core.jobs.supervisor import Supervisor, default_worker_count

from . import options


def add_parsers(sub) -> None:
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
    p.add_argument(
        "--remeasure-when-quiet",
        action="store_true",
        help="with --forever: while idle and every core is free, queue each measurement whose timing is in "
        "doubt again, once (`tessera submit --doubtful` does it at once)",
    )
    options.store(p)
    p.set_defaults(func=cmd_worker)


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
    if args.remeasure_when_quiet and not args.forever:
        raise TesseraError("--remeasure-when-quiet waits for the machine to be quiet: add --forever")
    when_idle = when_quiet if args.remeasure_when_quiet else None
    supervisor.run(forever=args.forever, report=lambda line: print(line, flush=True), when_idle=when_idle)
    return 0
