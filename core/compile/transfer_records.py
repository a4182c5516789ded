"""The tuned kernels in MetaSchedule tuning databases, by kernel class.

A database folder (database_workload.json, database_tuning_record.json) holds
workloads (the tuned PrimFuncs) and one line per measured trial, in measured
order. Each workload with a successful trial is a tuned kernel; its fastest
trials are the schedules transfer-tuning offers to other kernels of its class.
Read directly from the files (not through JSONDatabase, which sorts by latency)
so that each schedule keeps its trial number. Imports TVM: worker processes only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.schedule import Trace

from .database import read_database
from .kernel_class import KernelClass, TransferError, kernel_class
from .transfer_sources import Source, rank_sources


@dataclass(frozen=True)
class TunedSchedule:
    """One tuned schedule: its database folder, trial number there (measured order), latency
    when tuned (on its own kernel), that kernel's argument shapes, and the trace."""

    database: Path
    trial: int
    latency_ms: float
    kernel: str
    trace: Trace

    @property
    def name(self) -> str:
        """'local/3f2a9c...-C_in=8,... trial 5': what results record as the schedule's source."""
        return f"{self.database.parent.name}/{self.database.name} trial {self.trial}"


@dataclass(frozen=True)
class TunedKernel:
    database: Path
    kclass: KernelClass
    workload: ms.database.Workload
    trials: tuple[tuple[int, float, list], ...]  # (trial, latency ms, record as JSON), fastest first

    def schedules(self, top_k: int) -> list[TunedSchedule]:
        shapes = ", ".join(
            "x".join(str(int(d)) for d in arg.shape) for arg in ms.arg_info.ArgInfo.from_prim_func(_main(self.workload))
        )
        return [
            TunedSchedule(
                self.database, trial, latency, shapes, ms.database.TuningRecord.from_json(record, self.workload).trace
            )
            for trial, latency, record in self.trials[:top_k]
        ]


def tuned_kernels(folders: Iterable[Path]) -> list[TunedKernel]:
    """Every workload with at least one successful trial in these database folders."""
    kernels = []
    for folder in folders:
        kernels += _read(Path(folder))
    return kernels


def class_counts(kernels: Iterable[TunedKernel]) -> Counter:
    """Tuned kernels per class key (|W_Tc| of the source-selection heuristic)."""
    return Counter(k.kclass.key for k in kernels)


def schedules_of(key: str, kernels: Iterable[TunedKernel], top_k: int = 1) -> list[TunedSchedule]:
    """The `top_k` fastest schedules of every tuned kernel of class `key`."""
    return [s for k in kernels if k.kclass.key == key for s in k.schedules(top_k)]


def choose_source(sources: Sequence[Source], untuned_ms: Mapping[str, float]) -> tuple[list[TunedKernel], list[dict]]:
    """The tuned kernels of the best-ranked source (core.compile.transfer_sources's heuristic,
    `untuned_ms`: the target's untuned time per class), and the ranking of all of them with
    how many of their tuned kernels are of the target's classes."""
    kernels = {source.name: tuned_kernels(source.folders) for source in sources}
    counts = {name: class_counts(found) for name, found in kernels.items()}
    ranking = rank_sources(untuned_ms, counts)
    report = [
        {"source": name, "score": score, "tuned_kernels": sum(counts[name][c] for c in untuned_ms)}
        for name, score in ranking
    ]
    return (kernels[ranking[0][0]] if ranking else []), report


def measured_trials(folder: Path) -> tuple[list[str], list[tuple[int, float | None, list]]]:
    """A database folder's workload keys (structural hashes) and its trials in measured order:
    (workload index, latency ms or None if it failed, the record as JSON)."""
    workloads, trials = _database(folder)
    return [workload[0] for workload in workloads], trials


def _read(folder: Path) -> list[TunedKernel]:
    workloads, measured = _database(folder)
    trials: dict[int, list[tuple[int, float, list]]] = {}
    for trial, (index, latency, record) in enumerate(measured):
        if latency is not None:
            trials.setdefault(index, []).append((trial, latency, record))
    try:
        found_in = {i: ms.database.Workload.from_json(workloads[i]) for i in trials}
        return [
            TunedKernel(folder, kernel_class(found_in[i].mod), found_in[i], tuple(sorted(found, key=lambda t: t[1])))
            for i, found in sorted(trials.items())
        ]
    except (ValueError, TypeError, IndexError, RuntimeError) as e:
        raise _damaged(folder, e) from None


def _database(folder: Path) -> tuple[list[list], list[tuple[int, float | None, list]]]:
    try:
        return read_database(folder)
    except (ValueError, TypeError, IndexError) as e:
        raise _damaged(folder, e) from None


def _damaged(folder: Path, error: Exception) -> TransferError:
    return TransferError(
        f"tuning database {folder} is damaged ({type(error).__name__}: {error}); "
        f"delete that folder or leave it out of the sources"
    )


def _main(workload: ms.database.Workload):
    return next(iter(workload.mod.functions.values()))
