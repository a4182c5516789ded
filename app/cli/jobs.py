"""`tessera jobs`: list the queue's jobs, or cancel or retry one."""

from __future__ import annotations

import sys
import time

from core.errors import TesseraError
from core.jobs.outcomes import take_back_orphans
from core.jobs.queue import JobQueue
from core.store import Store

from . import options
from .reports import print_table


def add_parsers(sub) -> None:
    p = sub.add_parser("jobs", help="list jobs, or cancel or retry one")
    p.add_argument("action", nargs="?", default="list", choices=("list", "cancel", "retry"))
    p.add_argument("job_id", nargs="?", type=int, metavar="ID")
    options.store(p)
    p.set_defaults(func=cmd_jobs)


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
            print_table(rows)
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
