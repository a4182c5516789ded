"""Only schedules that compute the right numbers reach a network.

TVM has miscompiled tuned schedules of Tessera's kernels (a padding stage computed under a
tile, a roll inlined into a tiled loop: 17 of 32 records of one searched operator gave wrong
results before those lowerings changed), and one wrong record in a network's database used
to fail the whole network's check against torch. So each kernel's records are tried fastest
first: each is built and run against TVM's default schedule on the same random inputs
(core.compile.transfer.Bench), and the first that agrees is the one the network is compiled
with; TVM's default when none does. Verdicts are kept beside the database (checked.json), so
a record is checked once per device, not once per candidate network."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tvm
from tvm import s_tir
from tvm.s_tir import meta_schedule as ms

from ..atomic import write_text_atomically
from ..compile.transfer import Bench, NotApplicable

VERDICTS = "checked.json"  # in the database folder: record key -> "" (right) or why it is wrong
TRIES = 4  # records tried per kernel, fastest first, before falling back to TVM's default


class Benches:
    """Each kernel's Bench (random inputs, the default schedule's output), built once per
    network and shared by transfer, the default's timing and the checks here."""

    def __init__(self, target: tvm.target.Target):
        self.target = target
        self._made: dict[str, Bench] = {}

    def of(self, kernel) -> Bench:
        if kernel.name not in self._made:
            self._made[kernel.name] = Bench.of_kernel(kernel.mod, self.target, kernel.name)
        return self._made[kernel.name]


@dataclass(frozen=True)
class Checked:
    """A kernel's fastest record that computes the right numbers (None: TVM's default), and how
    many faster ones were skipped because they did not."""

    record: ms.database.TuningRecord | None
    latency_ms: float | None
    wrong: int


def checked_records(kernels: Sequence, benches: Benches, folder: Path) -> dict[str, Checked]:
    """Kernel name -> its Checked record in the database at `folder`; the caller holds the
    folder's lock (core.networks.schedules.locked), since verdicts are written there."""
    database = ms.database.JSONDatabase(work_dir=str(folder))
    path = folder / VERDICTS
    verdicts = _read(path)
    known = len(verdicts)
    chosen = {k.name: _first_right(k, benches, database, verdicts) for k in kernels}
    if len(verdicts) != known:
        write_text_atomically(path, json.dumps(verdicts, indent=0, sort_keys=True))
    return chosen


def database_of(kernels: Sequence, chosen: dict[str, Checked]) -> ms.database.Database:
    """An in-memory database holding only the chosen records, to compile the network with."""
    memory = ms.database.MemoryDatabase()
    for k in kernels:
        record = chosen[k.name].record
        if record is not None:
            memory.commit_tuning_record(
                ms.database.TuningRecord(
                    record.trace,
                    memory.commit_workload(k.mod),
                    run_secs=record.run_secs,
                    target=record.target,
                    args_info=record.args_info,
                )
            )
    return memory


def _first_right(kernel, benches: Benches, database, verdicts: dict[str, str]) -> Checked:
    wrong = 0
    if not database.has_workload(kernel.mod):
        return Checked(None, None, 0)  # never scheduled: nothing to check (and nothing written to the database)
    for record in database.get_top_k(database.commit_workload(kernel.mod), TRIES):
        key = _key(kernel.mod, record.trace)
        if key not in verdicts:
            verdicts[key] = _verdict(kernel.mod, record.trace, benches.of(kernel))
        if verdicts[key]:
            wrong += 1
            continue
        return Checked(record, sum(float(s) for s in record.run_secs) / len(record.run_secs) * 1e3, wrong)
    return Checked(None, None, wrong)


def _verdict(mod: tvm.IRModule, trace, bench: Bench) -> str:
    """'' when the record's schedule computes what the default does, else why not."""
    if not trace.insts:
        return ""  # no steps: the default itself
    sch = s_tir.Schedule(mod)
    try:
        trace.apply_to_schedule(sch, remove_postproc=False)
        bench.check(bench.build(sch.mod))
    except NotApplicable as e:
        return str(e)
    except (tvm.error.TVMError, RuntimeError, ValueError) as e:  # the trace no longer applies
        return f"does not apply: {type(e).__name__}"
    return ""


def _key(mod: tvm.IRModule, trace) -> str:
    workload = ms.database.Workload(mod).as_json()[0]
    steps = hashlib.sha1(str(trace).encode()).hexdigest()  # its steps with their decisions, as text
    return f"{workload}:{steps}"


def _read(path: Path) -> dict[str, str]:
    """The verdicts so far; a damaged file is checked again rather than trusted."""
    try:
        verdicts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(verdicts, dict) or not all(isinstance(v, str) for v in verdicts.values()):
        return {}
    return verdicts
