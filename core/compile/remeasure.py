"""Measuring again the results whose timing is in doubt: a request (core.jobs.submit) that
queues, for every measurement in doubt (the results view's `in_doubt`) made by a measure or
transfer job, the same job once more. A result in doubt is left out of every ranking until a
measurement of the same operator and sizes holds; the window queues these with one click and
`tessera submit --doubtful` from the command line. A measurement already queued again (its
job not finished) is not queued twice. Imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass

from ..jobs.queue import QUEUED, RUNNING
from ..jobs.submit import PlannedJob, submit
from ..store import Store
from ..store.stored_values import stored_json
from .payloads import MeasurePayload, TransferPayload
from .rounds import core_count, free_cores

PAYLOADS: dict[str, type[MeasurePayload] | type[TransferPayload]] = {
    "measure": MeasurePayload,
    "transfer": TransferPayload,
}
KEY = "remeasure:"  # the input key of a job measuring a result again: this, then its measurement id


@dataclass(frozen=True)
class RemeasureDoubtful:
    """Every measurement in doubt made by a job of PAYLOADS' kinds, queued again; `once`: only
    those never queued again before, and not themselves made by measuring again; `measurements`:
    only those of these ids (a point the user picked), where given."""

    once: bool = False
    measurements: tuple[int, ...] = ()

    def plan(self, store: Store) -> tuple[list[PlannedJob], list[str]]:
        rows = store.readable.execute(
            "SELECT m.id, m.operator_id, m.device_id, j.id, j.kind, j.payload, j.input_key FROM measurements AS m "
            "LEFT JOIN jobs AS j ON j.id = m.job_id WHERE m.timing_note IS NOT NULL ORDER BY m.id"
        ).fetchall()
        rows = [row for row in rows if not self.measurements or row[0] in self.measurements]
        pending = {
            key
            for (key,) in store.readable.execute(
                "SELECT input_key FROM jobs WHERE input_key LIKE ?"
                + ("" if self.once else f" AND state IN ('{QUEUED}', '{RUNNING}')"),
                [f"{KEY}%"],
            )
        }
        planned, notes = [], []
        for measurement, operator, device, job, kind, payload, made_by in rows:
            key = f"{KEY}{measurement}"
            if self.once and (made_by or "").startswith(KEY):
                continue
            if kind not in PAYLOADS:
                made = f"a {kind} job" if kind else "no job of this store"
                notes.append(f"measurement {measurement} came from {made}: it cannot be queued again")
            elif key not in pending:
                document = stored_json(payload, "jobs", job, "payload")
                planned.append(PlannedJob(PAYLOADS[kind].from_dict(document), operator, device, key))
        if not rows:
            notes.append("no measurement is in doubt")
        return planned, notes


def when_quiet(store: Store) -> int:
    """For an idle worker: when every core this process may use is free, every measurement in
    doubt queued again (RemeasureDoubtful(once=True)); how many were queued."""
    cores = core_count()
    if free_cores(cores) < cores:
        return 0
    return len(submit(store, RemeasureDoubtful(once=True)).ids)
