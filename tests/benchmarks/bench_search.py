"""Distinct valid operators per second (one core) for each search strategy, where the time
goes (propose, shape inference, solve, hash), and how redundant Syno's space is without
canonicalization, and what staging reductions (rfactor) does to the FLOPs budget.

Published references: Syno reports 86 canonical of 6,452 random samples without
canonicalization (>70x redundancy), and 253 distinct operators from 5 million trials in
68 s on 192 cores with shape distance, none without. Anchors measured on this machine
(issue 23): Canvas's own sampler 0.55-0.68 kernels/s, Syno's 0.30/s."""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

from core.analysis.summary import summarize
from core.ir.serialize import load_operator
from core.search.base import Budget, Limits
from core.search.canvas_sampler import CanvasSampler
from core.search.mcts import SynoMCTS
from core.search.syno import SynoRandom
from tests.support import ROOT

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
SAMPLES = 2000  # random chains drawn without canonicalization
#: stage -> functions whose cumulative time is that stage ("propose" is the rest)
STAGES = {
    "shape inference": ("summarize",),
    "solve": ("solve_budget",),
    "hash": ("content_hash", "canonical_json", "wl_hash", "key"),
}


def rate(strategy) -> tuple[float, int]:
    found, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        batch = strategy.ask(1)
        if not batch:
            break
        found += len(batch)
    return found / (time.perf_counter() - start), found


def stages(make) -> str:
    """Shares of the time per stage, from a profiled run of a fresh strategy (the profiler
    slows everything, so the rate comes from the unprofiled run)."""
    strategy, profile = make(), cProfile.Profile()
    profile.enable()
    start = time.perf_counter()
    while time.perf_counter() - start < SECONDS / 2 and strategy.ask(1):
        pass
    profile.disable()
    table = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = max(ct for (_, _, name), (_, _, _, ct, _) in table.items() if name == "ask")
    shares = {
        stage: sum(ct for (_, _, name), (_, _, _, ct, _) in table.items() if name in names) / total
        for stage, names in STAGES.items()
    }
    shares = {"propose": max(0.0, 1 - sum(shares.values())), **shares}
    return ", ".join(f"{stage} {share:4.0%}" for stage, share in shares.items())


def redundancy(template, budget) -> str:
    """Syno's measure: random chains drawn with canonicalization off; how many pass every
    rule, and how many distinct functions (canonical forms of coordinate expressions) they are."""
    raw = SynoRandom(template, budget, seed=0, use_canonical=False).space
    judge = SynoRandom(template, budget, seed=0).space
    rng = SynoRandom(template, budget, seed=0).rng
    drawn, canonical, forms = 0, 0, set()
    while drawn < SAMPLES:
        p = raw.rollout(raw.root, rng)
        if p is None:
            continue
        drawn += 1
        canonical += judge.violation(p) is None
        forms.add(raw.algebra.key(p.coords))
    return (
        f"{drawn} random chains without canonicalization: {canonical} canonical ({drawn / max(canonical, 1):.1f}x "
        f"redundancy), {len(forms)} distinct functions (canonicalization removes {drawn - len(forms)} duplicates)"
    )


def staging(template, budget, n: int = 500) -> str:
    """MCTS proposals drawn without a FLOPs cap, counted in one stage per reduction and as the
    kernel stages them (rfactor, the cheapest reduction order): how many cost less staged,
    and how many more fit under the budget."""
    limits = Limits(template, budget)
    found = SynoMCTS(template, Budget(flops=None, max_primitives=budget.max_primitives), seed=0).ask(n)
    lower, ratios, fit_before, fit_now = 0, [], 0, 0
    for c in found:
        bindings = {**limits.bindings, **c.graph.bindings}
        s = summarize(c.graph, bindings)
        one_stage, staged = s.cost.total("flops").evaluate(bindings), s.numeric_cost["flops"]
        if staged < one_stage:
            lower += 1
            ratios.append(float(one_stage / staged))
        fit_before += one_stage <= limits.max_flops
        fit_now += staged <= limits.max_flops
    median = sorted(ratios)[len(ratios) // 2] if ratios else 1.0
    return (
        f"{len(found)} MCTS proposals without a FLOPs cap: {lower} cost less staged (median {median:.1f}x less); "
        f"{fit_now} fit under the budget staged, {fit_before} counted in one stage"
    )


def main() -> None:
    template = load_operator(ROOT / "resources" / "examples" / "conv2d.json")
    budget = Budget(flops=1.0, max_primitives=7)
    runs = [
        ("canvas random sampler", lambda: CanvasSampler(template, budget, seed=0)),
        ("syno random sampling", lambda: SynoRandom(template, budget, seed=0)),
        ("syno mcts (distance + canonical)", lambda: SynoMCTS(template, budget, seed=0)),
        ("syno mcts, no shape distance", lambda: SynoMCTS(template, budget, seed=0, use_distance=False)),
        ("syno mcts, no canonicalization", lambda: SynoMCTS(template, budget, seed=0, use_canonical=False)),
    ]
    print(f"template conv2d, FLOPs budget 1.0x, at most 7 primitives, {SECONDS:.0f} s each, one core")
    for label, make in runs:
        per_s, n = rate(make())
        print(f"{label:34s} {per_s:7.1f} valid distinct/s ({n} found); time: {stages(make)}")
    print(redundancy(template, budget))
    print(staging(template, budget))


if __name__ == "__main__":
    main()
