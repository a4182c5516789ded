"""`tessera jobs`: list the queue's jobs, or cancel or retry one."""

from __future__ import annotations

import sys
import time

from core.errors import TesseraError
from core.jobs.outcomes import take_back_orphans
from core.jobs.queue import JobQueue
from core.store import Store, StoreMissing

from . import options
from .reports import print_table


def add_parsers(sub) -> None:
    p = sub.add_parser("jobs", help="list jobs, or cancel or retry one")
    p.add_argument("action", nargs="?", default="list", choices=("list", "cancel", "retry"))
    p.add_argument("job_id", nargs="?", type=int, metavar="ID")
    options.store(p)
    p.set_defaults(func=cmd_jobs)


def cmd_jobs(args) -> int:
    if args.action == "list":
        return _list(args)
    with Store(args.store) as store:
        queue = JobQueue(store)
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


def _list(args) -> int:
    """Every job, read without writing; on a store that may be written, jobs whose workers are
    gone are first taken back (core.jobs.outcomes), so they are not shown running."""
    try:
        store = Store(args.store, reading=True)
    except StoreMissing:
        print("no jobs yet")
        return 0
    with store:
        healthy = store.may_be_written
        if not healthy and store.reading_note():
            print(f"warning: {store.reading_note()}", file=sys.stderr)
        jobs = [] if healthy else JobQueue(store).jobs()
    if healthy:  # checked a moment ago (quick_check): opened to be written without checking again
        with Store(args.store, check=False) as store:
            queue = JobQueue(store)
            for line in take_back_orphans(queue):
                print(line, file=sys.stderr)
            jobs = queue.jobs()
    rows = [("id", "kind", "state", "tries", "progress", "operator", "where", "note")]
    for job in jobs:
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
    print_table(rows)
    return 0
