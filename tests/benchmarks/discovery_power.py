"""bench_discovery's power section: can the default task say "equal"?

An operator known to equal the original (tests/core/data/rearranged_conv.json: a standard
convolution through another arrangement of primitives) and the 1x1 network (no spatial
context) are each trained against the original over --seeds seeds on the proxy task
(core.train.seeds: each seed trained to the end, tested on the test split). From the paired
differences: how often the default seed rule (core.train.sequential) would show each within the
margin, by simulation (differences drawn from a normal distribution of the measured mean and
spread, which judges the task; and, as a check, resampled from the measured ones), and the rule
itself run once on the measured seeds in order. A task can say
"equal" when the equal operator is shown within at least 80% of the time and the 1x1 network at
most 10%.

Each training runs in a spawned process of one thread (--power-workers at once), seed by seed,
so a run stopped early leaves whole seeds. Every accuracy is kept in --results DIR's power.json,
by network, task and seed: the original's trainings are shared by both candidates, and the same
command resumes a stopped run or adds seeds.
"""

from __future__ import annotations

import json
import multiprocessing
import statistics
import time
from pathlib import Path

import torch

from core.ir.graph import OperatorGraph
from core.ir.serialize import load_operator
from core.train.paired import paired_difference, report_seeds
from core.train.seeds import train_over_seeds
from core.train.sequential import DEFAULT_RULE, SeedRule, normal, resampled, simulate
from core.train.settings import EvalSettings, TrainConfig
from tests.support import ROOT, chain

EQUAL_OPERATOR = ROOT / "tests" / "core" / "data" / "rearranged_conv.json"
ORIGINAL, EQUAL, POINTWISE = "original", "equal operator (rearranged convolution)", "1x1 network"
SIMULATED_RUNS = 4000
#: what the task must do: the equal operator shown within at least this often, the 1x1 at most
EQUAL_PASSES, POINTWISE_PASSES = 0.80, 0.10


def pointwise() -> OperatorGraph:
    """A 1x1 convolution as MCTS writes it (share, reduce: no spatial window)."""
    return chain(
        ["C_in", "H", "W"],
        ["C_out", "H", "W"],
        [("share", "share", {"dims": [0], "out": "C_out"}, ["input"]), ("sum", "reduce", {"dim": 1}, ["share"])],
    )


def _network(name: str) -> OperatorGraph | None:
    return {ORIGINAL: None, EQUAL: load_operator(EQUAL_OPERATOR), POINTWISE: pointwise()}[name]


def _train(task: tuple[str, EvalSettings, TrainConfig, int]) -> tuple[str, int, float | None, float]:
    """One network, one seed, in a worker process of one thread: its test accuracy and seconds."""
    name, settings, config, seed = task
    torch.set_num_threads(1)
    [run] = train_over_seeds(_network(name), settings, config, [seed])
    return name, seed, run.accuracy, run.seconds


def _key(name: str, settings: EvalSettings, config: TrainConfig, seed: int) -> str:
    return f"{name} | {settings.dataset_label} limit {settings.limit} | {settings.spec.label} | {config.epochs} epochs | seed {seed}"


def train_all(settings: EvalSettings, config: TrainConfig, seeds: tuple[int, ...], workers: int, cache: Path):
    """Every network's test accuracy at every seed, from the cache where it is there already."""
    found = json.loads(cache.read_text()) if cache.exists() else {}
    tasks = [
        (name, settings, config, seed)
        for seed in seeds
        for name in (ORIGINAL, EQUAL, POINTWISE)
        if _key(name, settings, config, seed) not in found
    ]
    print(f"  {len(seeds) * 3 - len(tasks)} trainings from {cache}, {len(tasks)} to run in {workers} process(es)")
    if tasks:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for name, seed, accuracy, seconds in pool.imap(_train, tasks):
                found[_key(name, settings, config, seed)] = {"accuracy": accuracy, "seconds": seconds}
                cache.write_text(json.dumps(found, indent=1))
                shown = "diverged" if accuracy is None else f"{accuracy:.4f}"
                print(f"    {name}, seed {seed}: {shown} in {seconds:.0f} s", flush=True)
    return {
        name: [found[_key(name, settings, config, seed)] for seed in seeds] for name in (ORIGINAL, EQUAL, POINTWISE)
    }


def power(settings: EvalSettings, seeds: int, epochs: int, workers: int, results: Path, rule: SeedRule = DEFAULT_RULE):
    """Train, then judge the task by how often the rule says within for each candidate."""
    config = TrainConfig(epochs=epochs)
    chosen = report_seeds(settings.seed, seeds)
    print(
        f"Power of the seed rule on {settings.dataset_label} (limit {settings.limit}), {settings.spec.label}, "
        f"{epochs} epochs, seeds {chosen[0]}-{chosen[-1]}; rule: looks at {', '.join(map(str, rule.looks()))} seeds, "
        f"each a {rule.confidence:.1%} interval ({rule.alpha:.1%} per side), margin {100 * rule.margin:g} point(s)"
    )
    start = time.perf_counter()
    runs = train_all(settings, config, chosen, workers, results / "power.json")
    print(f"  trained in {time.perf_counter() - start:.0f} s")
    original = [r["accuracy"] for r in runs[ORIGINAL]]
    print(f"  {ORIGINAL}: {', '.join(f'{a:.4f}' for a in original if a is not None)}; {_seconds(runs[ORIGINAL])}")
    passes: dict[str, float] = {}
    for name in (EQUAL, POINTWISE):
        ours = [r["accuracy"] for r in runs[name]]
        pairs = [(a, b) for a, b in zip(ours, original) if a is not None and b is not None]
        if len(pairs) < 2:
            print(f"  {name}: fewer than 2 seeds where both trained")
            continue
        measured = paired_difference([a for a, _ in pairs], [b for _, b in pairs])
        differences = measured.differences
        spread = measured.spread
        print(
            f"  {name}: {', '.join(f'{a:.4f}' for a, _ in pairs)}; {_seconds(runs[name])}\n"
            f"    paired differences (points): {', '.join(f'{100 * d:+.2f}' for d in differences)}; mean "
            f"{100 * measured.mean:+.2f}, sd {100 * spread:.2f}; at {len(pairs)} seeds {measured.verdict(rule.margin)}"
        )
        for method, draw in (
            (
                f"normal, mean {100 * measured.mean:+.2f} and sd {100 * spread:.2f} points",
                normal(measured.mean, spread),
            ),
            (f"resampling the {len(differences)} measured differences", resampled(differences)),
        ):
            sim = simulate(rule, draw, SIMULATED_RUNS)
            passes.setdefault(name, sim.within)
            print(
                f"    the rule shows it within in {sim.within:.1%} of {sim.runs} simulated runs ({method}); "
                f"worse {sim.worse:.1%}, undecided {sim.undecided:.1%}; {sim.mean_seeds:.1f} seeds on average"
            )
        print(f"    the rule run once on the measured seeds in order: {_run_once(rule, differences)}")
    if len(passes) == 2:
        equal, one = passes[EQUAL], passes[POINTWISE]
        print(
            f"  the task {'can' if equal >= EQUAL_PASSES and one <= POINTWISE_PASSES else 'cannot'} say equal: the "
            f"equal operator shown within {equal:.0%} (at least {EQUAL_PASSES:.0%} needed), the 1x1 network "
            f"{one:.0%} (at most {POINTWISE_PASSES:.0%}); by the normal simulation"
        )


def _run_once(rule: SeedRule, differences: tuple[float, ...]) -> str:
    """The rule looking at the measured differences as evaluate would, while there are enough."""
    decision = rule.run(differences)
    if decision.finished:
        return decision.words()
    return f"{decision.words()} (only {len(differences)} measured)"


def _seconds(runs: list[dict]) -> str:
    return f"{statistics.mean(r['seconds'] for r in runs):.0f} s per training"
