"""Throughput of the two executors on this machine: the same batch of 50 Fisher Potential
jobs (tiny ResNet-18, 8 px digits) through local worker processes and through the Ray
executor (a local Ray instance of 2 CPUs started by its runner).

Figures, for each executor: wall time from start() to the last result in the store, time
to the first result (process start-up, imports, for Ray also the instance), and the steady
rate after the first result; overhead per job = steady time per job through Ray minus
through the local pool. The two must store the same Fisher Potential for every job."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from core.ir.serialize import read_document
from core.jobs.executors import RayExecutor
from core.jobs.queue import DONE, JobQueue
from core.jobs.registry import handlers
from core.jobs.supervisor import Supervisor
from core.store import Store
from core.train.payloads import FisherPayload
from core.train.settings import EvalSettings
from tests.support import ROOT

JOBS = 50
CPUS = 2
TINY = {"backbone": "resnet18", "width": 4, "resolution": 8, "limit": 200, "fisher_batch": 16}
EXAMPLES = ("depthwise_separable", "shift_conv", "grouped_conv", "gated_separable", "involution")


def submit(path: Path) -> list[int]:
    with Store(path) as store:
        queue = JobQueue(store)
        docs = [(name, read_document(ROOT / "resources" / "examples" / f"{name}.json")) for name in EXAMPLES]
        ids = []
        for i in range(JOBS):
            name, doc = docs[i % len(docs)]
            ids.append(
                queue.submit(
                    "fisher",
                    FisherPayload(doc, EvalSettings(**TINY, seed=i // len(docs))).to_dict(),
                    operator_id=store.add_operator(doc, name),
                )
            )
    return ids


def run(path: Path, **executor) -> tuple[float, float, dict[int, float]]:
    """-> (seconds to the first result, seconds to the last, job id -> Fisher Potential)."""
    ids = submit(path)
    supervisor = Supervisor(path, handlers={"fisher": handlers()["fisher"]}, **executor)
    with Store(path) as store:
        queue = JobQueue(store)
        start = time.perf_counter()
        supervisor.start()
        first = None
        try:
            while True:
                supervisor.poll()
                done = store.db.execute("SELECT COUNT(*) FROM jobs WHERE state = ?", [DONE]).fetchone()[0]
                if done and first is None:
                    first = time.perf_counter() - start
                if not supervisor.busy():
                    break
                time.sleep(0.05)
            last = time.perf_counter() - start
        finally:
            supervisor.stop()
        jobs = [queue.get(i) for i in ids]
    failed = [j for j in jobs if j.state != DONE]
    if failed:
        raise SystemExit(f"{len(failed)} job(s) did not finish: {failed[0].describe()}: {failed[0].error}")
    return first, last, {j.id: j.result["fisher_potential"] for j in jobs}


def main() -> None:
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, executor in (("local pool", {"workers": CPUS}), ("Ray", {"ray": RayExecutor(cpus=CPUS)})):
            first, last, scores = run(Path(tmp) / f"{label}.db", **executor)
            steady = (last - first) / (JOBS - 1)
            figures[label] = (first, last, steady, scores)
            print(
                f"{label:>10}: {JOBS} Fisher jobs in {last:6.1f} s; first result after {first:5.1f} s; "
                f"then {steady * 1e3:6.0f} ms per job ({1 / steady:4.1f} jobs/s) on {CPUS} CPUs"
            )
    (_, local_last, local_steady, local_scores), (_, ray_last, ray_steady, ray_scores) = figures.values()
    print(
        f"Ray / local: wall time x{ray_last / local_last:.2f}; steady time per job x{ray_steady / local_steady:.2f}; "
        f"overhead per job {1e3 * (ray_steady - local_steady):+.0f} ms"
    )
    same = list(local_scores.values()) == list(ray_scores.values())
    print(f"same Fisher Potential for all {JOBS} jobs: {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
