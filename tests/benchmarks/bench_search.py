"""Distinct valid operators per second (one core) for each search strategy, where the time
goes (propose, shape inference, solve, hash), and how redundant Syno's space is without
canonicalization, and what staging reductions (rfactor) does to the FLOPs budget.

Published references: Syno reports 86 canonical of 6,452 random samples without
canonicalization (>70x redundancy), and 253 distinct operators from 5 million trials in
68 s on 192 cores with shape distance, none without. The canonical rate here counts the
same way: random chains drawn with canonicalization off, how many pass every rule. Anchors
measured on this machine (issue 23): Canvas's own sampler 0.55-0.68 kernels/s, Syno's 0.30/s."""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time

import torch

from core.analysis.summary import summarize
from core.ir.serialize import load_operator
from core.search.base import Budget, Limits
from core.search.canvas_sampler import CanvasSampler
from core.search.mcts import SynoMCTS
from core.search.syno import SynoRandom
from tests.core.search_enumeration import canonical_rate, enumerate_chains, lost_functions, space
from tests.support import ROOT

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
SAMPLES = 2000  # random chains drawn without canonicalization
CHECKED, ENUMERATED = 5, 6  # every chain up to these primitives: checked numerically, counted
CHECK_SIZES = {"C_in": 8, "C_out": 16, "H": 4, "W": 5, "K": 3, "s": 2, "g": 4}
#: stage -> functions whose cumulative time is that stage ("propose" is the rest)
STAGES = {
    "shape inference": ("summarize",),
    "solve": ("solve_budget",),
    "hash": ("content_hash", "canonical_json", "key"),
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
    """Syno's measure, framed as its 86 of 6,452: random chains drawn with canonicalization off,
    how many pass every rule, and how many distinct functions they are."""
    drawn, canonical, functions = canonical_rate(template, budget, SAMPLES)
    return (
        f"canonical rate: {canonical} of {drawn} random chains drawn without canonicalization pass every rule "
        f"({drawn / max(canonical, 1):.0f}x redundancy; Syno: 86 of 6,452), {functions} distinct functions"
    )


def lossless(template) -> list[str]:
    """Every chain up to ENUMERATED primitives (no FLOPs cap) with the rules and without: the
    functions (canonical forms) without them that no canonical chain has; up to CHECKED
    primitives also numerically (tests/core/test_search_lossless.py explains the check)."""
    lines = []
    torch.set_num_threads(1)  # thousands of tiny tensors
    for depth in range(CHECKED, ENUMERATED + 1):
        start = time.perf_counter()
        raw, canonical = space(template, depth, False), space(template, depth, True)
        forms, twins = enumerate_chains(raw), enumerate_chains(canonical)
        counts = f"{sum(map(len, forms.values())):,} chains, {len(forms):,} functions"
        line = (
            f"at most {depth} primitives: without the rules {counts}; with them "
            f"{sum(map(len, twins.values())):,} chains, {len(twins):,} functions; lost "
            f"{sum(form not in twins for form in forms)}"
        )
        if depth == CHECKED:
            _, wrong, fitted, ones = lost_functions(raw, forms, canonical, twins, CHECK_SIZES)
            line += f"; numerically {len(wrong)} lost ({fitted:,} chains fitted by a one-weight twin, {ones:,} with weights 1)"
        lines.append(f"{line} ({time.perf_counter() - start:.0f} s)")
    return lines


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
        load = os.getloadavg()[0]
        per_s, n = rate(make())
        print(f"{label:34s} {per_s:7.1f} valid distinct/s ({n} found, load {load:.1f}); time: {stages(make)}")
    print(redundancy(template, budget))
    print("canonicalization loses no function (enumerated on conv2d, shape distance on):")
    for line in lossless(template):
        print("  " + line)
    print(staging(template, budget))


if __name__ == "__main__":
    main()
