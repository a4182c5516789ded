"""Random transformation sequences screened per minute (NAS-PTE's published figure: 1000
configurations in under 5 minutes on a CPU, about 90% rejected by Fisher Potential).

Each configuration is a random sequence on the conv2d nest: its steps are judged against the
dependences, and a legal one's operator replaces the standard convs of a reduced ResNet-18
(width 8, 16x16 digits) and is scored by Fisher Potential against the original network.
Usage: bench_sequences.py [CONFIGURATIONS]   (default 200; the published count is 1000)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from core.analysis.legality import check_sequence
from core.codegen.loopnest_ir import result_operator
from core.ir.serialize import load_operator
from core.search.sequences import SequenceSearch
from core.train.capacity import CapacityJudge
from core.train.settings import EvalSettings

PUBLISHED_PER_MINUTE = 1000 / 5
PUBLISHED_REJECTED = 0.90


def main(count: int) -> None:
    root = Path(__file__).resolve().parents[2]
    template = load_operator(root / "resources" / "examples" / "conv2d.json")
    settings = EvalSettings(backbone="resnet18", width=8, resolution=16, fisher_batch=32)
    started = time.perf_counter()
    judge = CapacityJudge(settings)
    setup = time.perf_counter() - started
    search = SequenceSearch(template, seed=0)
    illegal = fisher_rejected = unfit = 0
    t0 = time.perf_counter()
    for _ in range(count):
        report = check_sequence(search.sample())
        if not report.legal:
            illegal += 1
            continue
        graph = result_operator(report.final, "bench").graph
        try:
            verdict = judge(graph)
        except Exception as e:  # an operator that fits no layer of the backbone is rejected too
            if "fits none" not in str(e):
                raise
            unfit += 1
            continue
        fisher_rejected += not verdict["passes"]
    elapsed = time.perf_counter() - t0
    per_minute = count / elapsed * 60
    rejected = illegal + fisher_rejected + unfit
    print(
        f"configurations screened: {count} in {elapsed:.1f} s (+ {setup:.1f} s loading data), "
        f"{per_minute:.0f} per minute"
    )
    print(f"  distinct operators scored by Fisher Potential: {judge.scored}")
    print(
        f"  rejected: {rejected} ({rejected / count:.0%}): {illegal} break a dependence, "
        f"{fisher_rejected} lose Fisher Potential, {unfit} fit no layer"
    )
    print(
        f"  1000 configurations would take {1000 / per_minute:.1f} min "
        f"(published: under 5 min; ratio to the published rate: {per_minute / PUBLISHED_PER_MINUTE:.2f}x)"
    )
    print(f"  rejection rate {rejected / count:.0%} vs published about {PUBLISHED_REJECTED:.0%}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
