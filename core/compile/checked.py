"""Only schedules that compute the right numbers are built: a network's, and a single kernel's.

TVM has miscompiled tuned schedules of Tessera's kernels (a padding stage computed under a
tile, a roll inlined into a tiled loop: 17 of 32 records of one searched operator gave wrong
results before those lowerings changed; a tuned winograd convolution doubled its output), and
one wrong record used to fail a whole network's check against torch, or a measurement. So a
kernel's records are tried fastest first: each is built and run against TVM's default
schedule on the same random inputs (core.compile.transfer.Bench), where the kernel runs, and
the first that agrees is the one the kernel is compiled with; TVM's default when none does.
Verdicts are kept beside the database (checked.json), so a record is checked once per device,
not once per candidate network or measurement.

A record is found by its kernel's structure, which ignores block names, while its trace finds
blocks by name; equal kernels of two networks may name a block after different relax variables
(a mean's "lv88_red" and "lv102_red"). So a record's trace is renamed to the kernel at hand
before it is checked or compiled (_for_kernel)."""

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
from .database import tuning_database
from .place import Place
from .transfer import Bench, NotApplicable

VERDICTS = "checked.json"  # in the database folder: record key -> "" (right) or why it is wrong
TRIES = 4  # records tried per kernel, fastest first, before falling back to TVM's default


@dataclass(frozen=True)
class Kernel:
    """A kernel as the checks know it: the name its bench is kept under, its module (a
    network's kernels add how often they run, core.networks.schedules.NetworkKernel)."""

    name: str
    mod: tvm.IRModule


class Benches:
    """Each kernel's Bench (random inputs, the default schedule's output at `place`), built
    when first needed, once per network, and shared by transfer, the default's timing and the
    checks here."""

    def __init__(self, place: Place):
        self.place = place
        self._made: dict[str, Bench] = {}

    @property
    def target(self) -> tvm.target.Target:
        return self.place.target

    def of(self, kernel: Kernel) -> Bench:
        if kernel.name not in self._made:
            self._made[kernel.name] = Bench.of_kernel(kernel.mod, self.place, kernel.name)
        return self._made[kernel.name]


@dataclass(frozen=True)
class Checked:
    """A kernel's fastest record that computes the right numbers (None: TVM's default), and how
    many faster ones were skipped because they did not."""

    record: ms.database.TuningRecord | None
    latency_ms: float | None
    wrong: int

    def schedule(self, mod: tvm.IRModule) -> tvm.IRModule | None:
        """`mod` scheduled by the record (its postprocessing included); None without one."""
        if self.record is None:
            return None
        sch = s_tir.Schedule(mod)
        self.record.trace.apply_to_schedule(sch, remove_postproc=False)  # checked: it applies
        return sch.mod


def checked_records(kernels: Sequence[Kernel], benches: Benches, folder: Path) -> dict[str, Checked]:
    """Kernel name -> its Checked record in the database at `folder`. Verdicts are written
    there at once (atomically): a network's caller holds the folder's lock
    (core.networks.schedules.locked); elsewhere two processes may each lose the other's new
    verdicts, which are then checked again."""
    database = tuning_database(folder)
    path = folder / VERDICTS
    verdicts = _read(path)
    known = len(verdicts)
    chosen = {k.name: _first_right(k, benches, database, verdicts) for k in kernels}
    if len(verdicts) != known:
        write_text_atomically(path, json.dumps(verdicts, indent=0, sort_keys=True))
    return chosen


def database_of(kernels: Sequence[Kernel], chosen: dict[str, Checked]) -> ms.database.Database:
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


def _first_right(kernel: Kernel, benches: Benches, database, verdicts: dict[str, str]) -> Checked:
    wrong = 0
    if not database.has_workload(kernel.mod):
        return Checked(None, None, 0)  # never scheduled: nothing to check (and nothing written to the database)
    workload = database.commit_workload(kernel.mod)  # as stored: block names of the kernel it was first seen in
    renames = {old: new for old, new in zip(_block_names(workload.mod), _block_names(kernel.mod)) if old != new}
    for stored in database.get_top_k(workload, TRIES):
        record = _for_kernel(stored, kernel.mod, renames)
        key = _key(kernel.mod, record.trace)
        if key not in verdicts:
            verdicts[key] = _verdict(kernel.mod, record.trace, benches.of(kernel))
        if verdicts[key]:
            wrong += 1
            continue
        return Checked(record, sum(float(s) for s in record.run_secs) / len(record.run_secs) * 1e3, wrong)
    return Checked(None, None, wrong)


def _for_kernel(
    record: ms.database.TuningRecord, mod: tvm.IRModule, renames: dict[str, str]
) -> ms.database.TuningRecord:
    """`record` with its trace's block names those of `mod`, a kernel equal in structure to the
    one it was recorded on: `renames` maps that kernel's block names to `mod`'s (blocks
    correspond in program order; a block the trace made, such as "lv88_red_rf", follows the one
    it was made from). Unchanged where the names already agree or the renamed trace does not
    apply (the check then says why)."""
    if not renames:
        return record
    insts, decisions = record.trace.as_json(remove_postproc=False)
    for inst in insts:
        if inst[0] == "GetSBlock":
            inst[2][0] = _renamed(inst[2][0], renames)
    sch = s_tir.Schedule(mod)
    try:
        s_tir.schedule.Trace.apply_json_to_schedule([insts, decisions], sch)
    except (RuntimeError, ValueError, TypeError):  # TVM raises these through its FFI
        return record
    return ms.database.TuningRecord(
        sch.trace, record.workload, run_secs=record.run_secs, target=record.target, args_info=record.args_info
    )


def _block_names(mod: tvm.IRModule) -> list[str]:
    """The names of a kernel's blocks, outer before inner, in program order."""
    sch = s_tir.Schedule(mod)
    names, pending = [], [sch.get_sblock("root")]
    while pending:
        block = pending.pop(0)
        names.append(sch.get(block).name_hint)
        pending[:0] = sch.get_child_blocks(block)
    return names


def _renamed(name: str, renames: dict[str, str]) -> str:
    if name in renames:
        return renames[name]
    made_from = max((old for old in renames if name.startswith(old + "_")), key=len, default=None)
    return renames[made_from] + name[len(made_from) :] if made_from else name


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
    except (RuntimeError, ValueError, TypeError) as e:  # the trace no longer applies (TVM raises these)
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
