"""A schedule for every kernel of a network, kept in one tuning database per device.

The kernels are the TIR tasks relax compiles a network into (its "zero" pipeline: legalised
and fused), each with how often one forward pass runs it. A kernel gets, in this order:
  1. its record in the device's network database (<tuning root>/<device>/networks), written
     when an earlier network had the same kernel: the original network's kernels are tuned
     once and every candidate reuses those it shares with it;
  2. with transfer on, the best schedule of a kernel of the same class from the tuning
     sources (the operator tuned on its own at those sizes, other networks; Gibson's
     transfer-tuning, core.compile.transfer), if it beats TVM's default; the record it makes
     (its trace with re-derived tiles and postprocessing) goes into the database;
  3. MetaSchedule within the budget (trials per kernel), tuning the kernels still without a
     record together, into the same database;
and TVM's default schedule where none of these gave one (such a kernel is "untuned": the
network then has no basis for a speedup). Where transfer or tuning ran, TVM's default is timed
too and recorded beside them (a record of no schedule steps), so the fastest of all is what
the network runs: a few trials that found nothing better cost no speed. Compiling the network then applies
the database's records (MetaSchedule's relax integration), each kernel's fastest record that
computes what TVM's default does (core.compile.checked). One process tunes a database at
a time (a file lock), so concurrent evaluations share their work instead of racing."""

from __future__ import annotations

import fcntl
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import tvm
from tvm import relax, s_tir
from tvm.s_tir import meta_schedule as ms

from ..compile.checked import Benches, Checked, Kernel, checked_records, database_of
from ..compile.database import recorded_trials_by_kernel, tuning_database
from ..compile.errors import CompileError
from ..compile.kernel_class import KernelClass, kernel_class
from ..compile.place import ThisMachine
from ..compile.transfer import transfer_kernel, untuned_latency
from ..compile.transfer_records import choose_source, schedules_of
from ..compile.transfer_sources import Source
from ..compile.tune import tune_kernels
from .results import KernelSchedule

Progress = Callable[[float, str], None]
DATABASE = "networks"  # the folder of the device's network database, under <tuning root>/<device>


@dataclass(frozen=True)
class NetworkKernel(Kernel):
    """A network's kernel: its name is relax's for the task, e.g. "fused_conv2d_add_relu"."""

    weight: int  # how many times one forward pass runs it
    kclass: KernelClass


def fused(mod: tvm.IRModule) -> tvm.IRModule:
    """The network as relax compiles it for scheduling: legalised, its ops fused into kernels."""
    return relax.get_pipeline("zero")(mod)


def network_kernels(mod: tvm.IRModule, target: tvm.target.Target, only: Sequence[str] = ()) -> list[NetworkKernel]:
    """The kernels of a fused network (fused()), those whose name contains one of `only` if given."""
    try:
        tasks = ms.relax_integration.extract_tasks(mod, target, params={})
    except Exception as e:  # TVM raises many types; the message says what failed
        raise CompileError(f"TVM could not extract the network's kernels: {type(e).__name__}: {e}") from None
    return [
        NetworkKernel(t.task_name, t.dispatched[0], int(t.weight), kernel_class(t.dispatched[0]))
        for t in tasks
        if not only or any(part in t.task_name for part in only)
    ]


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the database folder's lock: one process schedules into it at a time."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Scheduled:
    """A network's kernels with where each schedule came from, and the database of the checked
    records to compile it with."""

    kernels: list[KernelSchedule]
    database: ms.database.Database


def schedule_kernels(
    kernels: Sequence[NetworkKernel],
    target: tvm.target.Target,
    folder: Path,
    trials_per_kernel: int,
    sources: Sequence[Source] = (),
    top_k: int = 1,
    cost_model: str = "xgb",
    progress: Progress = lambda fraction, message: None,
    check_cancelled: Callable[[], None] = lambda: None,
) -> Scheduled:
    """Give every kernel a schedule in the database at `folder` (the steps of this module's doc;
    `sources` empty: no transfer) and check the records the network would run; hold the folder's
    lock while doing so."""
    benches = Benches(ThisMachine(target))
    with locked(folder):
        recorded = _recorded(folder, kernels)
        missing = [k for k in kernels if k.name not in recorded]
        transferred = _transfer(missing, benches, folder, sources, top_k, progress, check_cancelled) if sources else {}
        rest = [k for k in missing if k.name not in transferred]
        check_cancelled()
        if rest and trials_per_kernel > 0:
            budget = trials_per_kernel * len(rest)
            progress(0.4, f"tuning {len(rest)} kernel(s) with up to {budget} trials")
            tune_kernels(
                [(k.name, k.mod, k.weight) for k in rest],
                target,
                folder,
                budget,
                cost_model=cost_model,
                on_progress=lambda done, total, what: progress(
                    0.4 + 0.5 * done / total, f"tuning the network's kernels: {what}"
                ),
            )
        tuned = {
            k.name: _keep_default(k, benches, folder, ("tuned", best))
            for k, best in ((k, _recorded(folder, [k]).get(k.name)) for k in rest)
            if best is not None
        }
        chosen = checked_records(kernels, benches, folder)
    found = {**{name: ("database", ms_) for name, ms_ in recorded.items()}, **transferred, **tuned}
    return Scheduled(
        [KernelSchedule(k.name, k.weight, k.kclass.key, *_told(found.get(k.name), chosen[k.name])) for k in kernels],
        database_of(kernels, chosen),
    )


def _told(found: tuple[str, float] | None, checked: Checked) -> tuple[str, float | None]:
    """Where the schedule the network runs came from, and its latency, saying so when faster
    records were skipped for computing wrong numbers (core.compile.checked)."""
    source, latency = found or ("untuned", None)
    if checked.wrong:
        skipped = f"{checked.wrong} faster record(s) computed wrong numbers and were skipped"
        source, latency = (
            (f"{source}; {skipped}", checked.latency_ms) if checked.record else (f"untuned; {skipped}", None)
        )
    return source, latency


def compile_scheduled(mod: tvm.IRModule, target: tvm.target.Target, database: ms.database.Database):
    """The network built with the checked schedules (TVM's default for kernels without one)."""
    try:
        return ms.relax_integration.compile_relax(database, mod, target, params=None)
    except Exception as e:  # TVM raises many types; the message says what failed
        raise CompileError(f"TVM could not build the network: {type(e).__name__}: {e}") from None


def _recorded(folder: Path, kernels: Sequence[NetworkKernel]) -> dict[str, float]:
    """Kernel name -> its best recorded latency (ms), for the kernels the database has a good trial of."""
    trials = recorded_trials_by_kernel(folder, [k.mod for k in kernels])
    return {k.name: min(done) for k, found in zip(kernels, trials) if (done := [t for t in found if t is not None])}


def _transfer(
    kernels: Sequence[NetworkKernel],
    benches: Benches,
    folder: Path,
    sources: Sequence[Source],
    top_k: int,
    progress: Progress,
    check_cancelled: Callable[[], None],
) -> dict[str, tuple[str, float]]:
    """Transfer-tune the kernels; the schedules that beat the default are committed to the
    database. Kernel name -> ('transfer:<schedule>', latency ms)."""
    if not kernels:
        return {}
    per_class: dict[str, float] = defaultdict(float)
    for k in kernels:
        per_class[k.kclass.key] += k.weight  # no untuned timing yet: weigh classes by use
    chosen, _ = choose_source(sources, per_class)
    database = tuning_database(folder)
    done: dict[str, tuple[str, float]] = {}
    for i, k in enumerate(kernels):
        check_cancelled()
        candidates = schedules_of(k.kclass.key, chosen, top_k)
        progress(0.05 + 0.3 * i / len(kernels), f"reusing schedules on {k.name} ({len(candidates)} found)")
        if not candidates:
            continue
        result = transfer_kernel(k.mod, k.kclass, benches.of(k), candidates, check_cancelled)
        if not result.applied:
            continue  # none of them fits this kernel: tuning may still give it one
        if result.best is not None and result.best_schedule is not None:
            _commit(database, k.mod, result.best_schedule.trace, result.latency_ms, benches.target)
            done[k.name] = (f"transfer:{result.best.schedule.name}", result.latency_ms)
        else:
            _commit(database, k.mod, s_tir.Schedule(k.mod).trace, result.untuned_ms, benches.target)
            done[k.name] = ("default kept", result.untuned_ms)
    return done


def _keep_default(k: NetworkKernel, benches: Benches, folder: Path, found: tuple[str, float]) -> tuple[str, float]:
    """Time TVM's default schedule of a kernel that was searched and record it beside what was
    found, so the faster of the two is what the network runs: (where it came from, latency)."""
    default_ms = untuned_latency(k.mod, benches.of(k))
    database = tuning_database(folder)
    _commit(database, k.mod, s_tir.Schedule(k.mod).trace, default_ms, benches.target)
    return ("default kept", default_ms) if default_ms < found[1] else found


def _commit(database, mod: tvm.IRModule, trace, latency_ms: float, target: tvm.target.Target) -> None:
    """A record of `trace` on the kernel with its latency, as MetaSchedule's runner would make it."""
    func = next(iter(mod.functions.values()))
    database.commit_tuning_record(
        ms.database.TuningRecord(
            trace,
            database.commit_workload(mod),
            run_secs=[latency_ms / 1e3],
            target=target,
            args_info=ms.arg_info.ArgInfo.from_prim_func(func),
        )
    )
