"""Store ingest rate and Pareto-front time, printed as plain lines (`make bench`).

Target: the front of 10^6 points with 2 objectives in under a second.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from core.ir.serialize import read_document
from core.store import MINIMIZE, Store, pareto_front
from tests.support import ROOT


def bench_ingest(store: Store, operator_id: int, rows: int) -> None:
    """Measurements as workers write them: one transaction per result, with 10 trials each."""
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for latency in rng.uniform(0.5, 20.0, rows):
        store.add_measurement(
            operator_id,
            None,
            {"latency_ms": float(latency), "flops": 1e9, "trials": [[i, float(latency)] for i in range(10)]},
        )
    elapsed = time.perf_counter() - start
    print(f"ingest: {rows} measurements (+{10 * rows} trials), one transaction each: {rows / elapsed:,.0f} results/s")


def bench_bulk_ingest(store: Store, operator_id: int, rows: int) -> None:
    """Rows in a single transaction, as an import of old results would write them."""
    rng = np.random.default_rng(1)
    latency, flops = rng.uniform(0.5, 20.0, rows), rng.uniform(1e8, 1e10, rows)
    start = time.perf_counter()
    with store.write():
        store.db["measurements"].insert_all(
            {"operator_id": operator_id, "latency_ms": float(a), "flops": float(b), "bindings": "{}"}
            for a, b in zip(latency, flops)
        )
    elapsed = time.perf_counter() - start
    print(f"ingest: {rows} measurements in one transaction: {rows / elapsed:,.0f} rows/s")


def bench_pareto(repeats: int = 3) -> None:
    """Uniform random points; the best of `repeats` runs."""
    rng = np.random.default_rng(2)
    for k in (2, 3):
        for n in (10**4, 10**5, 10**6):
            values = rng.random((n, k))
            elapsed = []
            for _ in range(repeats):
                start = time.perf_counter()
                front = pareto_front(values, [MINIMIZE] * k)
                elapsed.append(time.perf_counter() - start)
            print(f"pareto: {k} objectives, {n:>9,} points: {min(elapsed) * 1e3:8.1f} ms ({len(front)} on the front)")


def bench_store_pareto(store: Store) -> None:
    rows = store.db["measurements"].count
    start = time.perf_counter()
    front = store.pareto(["latency_ms", "flops"])
    elapsed = time.perf_counter() - start
    print(
        f"store.pareto(latency_ms, flops) over {rows:,} stored results: {elapsed * 1e3:.1f} ms "
        f"({len(front)} on the front)"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "results.db") as store:
        operator_id = store.add_operator(read_document(ROOT / "resources" / "examples" / "conv2d.json"), "conv2d")
        bench_ingest(store, operator_id, 2000)
        bench_bulk_ingest(store, operator_id, 100_000)
        bench_pareto()
        bench_store_pareto(store)
