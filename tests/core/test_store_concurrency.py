"""Several processes writing and one reading the same store file at once: nobody ever
sees "database is locked", every write lands, and no job is claimed twice."""

import multiprocessing
import time

from core.ir.serialize import read_document
from core.jobs.queue import DONE, JobQueue
from core.store import Store

WRITERS, ROUNDS = 4, 60


def write_many(path: str, operator_files: list[str], writer: int, rounds: int) -> None:
    """One writer process: operators (the same ones as every other writer), jobs submitted,
    claimed and completed, measurements with trials, each in its own short transaction."""
    with Store(path) as store:
        queue = JobQueue(store)
        ops = [store.add_operator(read_document(p)) for p in operator_files]
        for i in range(rounds):
            op = ops[i % len(ops)]
            job = queue.submit("probe", {"writer": writer, "round": i}, operator_id=op)
            store.add_measurement(
                op,
                None,
                {
                    "latency_ms": 1.0 + writer + i / rounds,
                    "flops": 1e6 * (i + 1),
                    "trials": [[0, 3.0], [1, 2.0], [2, 1.0]],
                },
                job_id=job,
            )
            claimed = queue.claim(["probe"])
            if claimed is not None:
                queue.report_progress(claimed, 0.5, "half way")
                assert queue.complete(claimed, {"completed_by": writer})


def test_four_writer_processes_and_a_reader(tmp_path, examples_dir):
    path = str(tmp_path / "results.db")
    Store(path).close()
    operator_files = [str(p) for p in sorted(examples_dir.glob("*.json"))]
    mp = multiprocessing.get_context("spawn")
    writers = [mp.Process(target=write_many, args=(path, operator_files, w, ROUNDS)) for w in range(WRITERS)]
    for p in writers:
        p.start()
    seen = []
    with Store(path) as reader:
        while any(p.is_alive() for p in writers):
            seen.append(reader.db["measurements"].count)
            reader.pareto(["latency_ms", "flops"])
            JobQueue(reader).jobs()
            time.sleep(0.01)
        for p in writers:
            p.join()
        assert [p.exitcode for p in writers] == [0] * WRITERS
        assert seen == sorted(seen) and len(seen) > 5  # the reader kept reading while they wrote

        total = WRITERS * ROUNDS
        assert reader.db["operators"].count == len(operator_files)
        assert reader.db["measurements"].count == total
        assert reader.db["trials"].count == 3 * total
        jobs = JobQueue(reader).jobs()
        assert len(jobs) == total
        assert all(j.attempts <= 1 for j in jobs)  # never claimed twice
        done = [j for j in jobs if j.state == DONE]
        assert len(done) == sum(j.attempts for j in jobs)
        assert len(done) > total // 2
