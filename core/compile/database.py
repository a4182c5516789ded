"""A MetaSchedule database folder, read without tuning: its trials in measured order (for
budgets already spent and convergence plots) and TVM's own loader, each turning a damaged or
foreign folder into a TuningError that names it."""

from __future__ import annotations

import json
from pathlib import Path

import tvm
from tvm.s_tir import meta_schedule as ms

from .errors import TuningError

_FAILED = 1e9  # MetaSchedule records a failed build or run as 1e10 seconds


def tuning_database(work_dir: Path) -> ms.database.JSONDatabase:
    """The MetaSchedule database in `work_dir`. TVM replays every record's steps on its kernel
    while loading, and one record that does not apply (a hand-edited or foreign file) makes it
    refuse the whole folder: TuningError naming the folder, not TVM's bare error."""
    try:
        return ms.database.JSONDatabase(work_dir=str(work_dir))
    except (RuntimeError, ValueError, TypeError) as e:
        raise TuningError(
            f"tuning database {work_dir} cannot be loaded: TVM could not replay its records ({e}); "
            "delete that folder to start over"
        ) from None


def recorded_trials(work_dir: Path, *mods: tvm.IRModule) -> list[float | None]:
    """Latency (ms, mean of the runs) of every trial of these kernels in `work_dir`, in measured order."""
    return [latency for found in recorded_trials_by_kernel(work_dir, mods) for latency in found]


def recorded_trials_by_kernel(work_dir: Path, mods) -> list[list[float | None]]:
    """For each kernel, the latencies (ms) of its trials in `work_dir`, in measured order; the
    database is read once."""
    keys = [ms.database.Workload(mod).as_json()[0] for mod in mods]
    try:
        workloads, trials = read_database(work_dir)
    except (ValueError, TypeError, IndexError) as e:
        raise TuningError(f"tuning database {work_dir} is damaged ({e}); delete that folder to start over") from None
    by_key: dict[str, list[float | None]] = {}
    for workload, latency, _ in trials:
        by_key.setdefault(workloads[workload][0], []).append(latency)
    return [by_key.get(key, []) for key in keys]


def read_database(work_dir: Path) -> tuple[list[list], list[tuple[int, float | None, list]]]:
    """A MetaSchedule database folder as written: its workloads (JSON, [structural hash, module])
    and its trials in measured order, (workload index, latency ms (mean of the runs) or None if
    the trial failed, the record's JSON). Missing files read as empty; a damaged line raises
    ValueError, TypeError or IndexError for the caller to name the folder."""
    workloads = [json.loads(line) for line in _lines(work_dir / "database_workload.json")]
    trials = []
    for line in _lines(work_dir / "database_tuning_record.json"):
        index, record = json.loads(line)
        run_secs = record[1]
        ok = run_secs and all(0 < s < _FAILED for s in run_secs)
        trials.append((index, sum(run_secs) / len(run_secs) * 1e3 if ok else None, record))
    return workloads, trials


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
