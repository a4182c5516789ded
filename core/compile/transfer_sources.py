"""Where reused schedules come from, and which of several sources to use.

A source is a set of tuning-database folders (MetaSchedule work dirs, each with
database_workload.json): a folder tree such as core.compile.tune.tuning_root()
or one tuned network's folder, or a results store, whose finished measure jobs
name the folders they tuned in. With several candidate sources, transfer-tuning
uses the one with the highest score of Gibson's heuristic (docs/papers.md, 5):

    score = sum over classes c of P_c^2 * sqrt(|W_Tc|)

P_c is the share of the target's untuned time spent in kernels of class c,
|W_Tc| the number of tuned kernels of class c in the source: squaring P_c
favours sources that cover the classes where the time goes, the square root
gives diminishing returns to many schedules of one class. Imports no TVM."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import CompileError

WORKLOADS = "database_workload.json"


@dataclass(frozen=True)
class Source:
    """`name`: as the user gave it; `folders`: its tuning-database folders."""

    name: str
    folders: tuple[Path, ...]


def open_source(path: str | Path) -> Source:
    """A folder tree (every database under it) or a results store file (the tuning folders of
    its finished jobs). CompileError if it is neither."""
    path = Path(path).expanduser()
    if path.is_dir():
        return Source(str(path), tuple(sorted(p.parent for p in path.rglob(WORKLOADS))))
    if path.is_file():
        return Source(str(path), _store_folders(path))
    raise CompileError(f"{path}: no such tuning folder or results store")


def source_score(untuned_ms: Mapping[str, float], tuned_kernels: Mapping[str, int]) -> float:
    """sum_c P_c^2 * sqrt(|W_Tc|): `untuned_ms` is the target's untuned time per class (P_c is
    each class's share of the total), `tuned_kernels` the source's tuned kernels per class."""
    total = sum(untuned_ms.values())
    if total <= 0:
        return 0.0
    return sum((ms / total) ** 2 * math.sqrt(tuned_kernels.get(c, 0)) for c, ms in untuned_ms.items())


def rank_sources(
    untuned_ms: Mapping[str, float], candidates: Mapping[str, Mapping[str, int]]
) -> list[tuple[str, float]]:
    """(source name, score), best first; ties keep the candidates' order."""
    scored = [(name, source_score(untuned_ms, counts)) for name, counts in candidates.items()]
    return sorted(scored, key=lambda item: -item[1])


def _store_folders(path: Path) -> tuple[Path, ...]:
    from core.jobs.queue import DONE, JobQueue
    from core.store import Store, StoreError

    try:
        with Store(path) as store:
            jobs = JobQueue(store).jobs((DONE,))
    except StoreError as e:
        raise CompileError(f"{path}: not a results store ({e})") from None
    folders = {
        Path(job.result["tuning_dir"])
        for job in jobs
        if isinstance(job.result, dict) and isinstance(job.result.get("tuning_dir"), str)
    }
    return tuple(sorted(f for f in folders if (f / WORKLOADS).exists()))


def payload_sources(given, default_root: Path) -> list[Source]:
    """A job's "sources" (a list of folder or store paths), or `default_root` (the tuning root)
    when it names none; a missing default root is an empty source, a missing named one an error."""
    if given is None:
        return [open_source(default_root) if default_root.exists() else Source(str(default_root), ())]
    if not isinstance(given, list) or not given or not all(isinstance(p, str) and p for p in given):
        raise CompileError(f"sources must be a non-empty list of tuning folders or results stores, got {given!r}")
    return [open_source(p) for p in given]
