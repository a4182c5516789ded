"""bench_discovery's early-stop section: does Canvas's early stop keep operators known to learn?

The original network and three operators known to learn on the proxy task (the equal operator,
tests/core/data/rearranged_conv.json, a standard convolution through another arrangement of
primitives; depthwise-separable; shift_conv) are trained for every epoch over --early-stop-seeds
seeds, no early stop, each curve of validation accuracy per epoch kept in --results DIR's
early_stop.json (by network, task and seed: the same command resumes or adds seeds). Each
learner's curve is then replayed through the rule (core.train.early_stop.stop_epoch) against
each of the original's curves as the best curve, which is what the loop compares with while the
original is its best finished run: the false-stop rate is the share of those pairs the rule
stops before the last epoch. A rule that stops operators known to learn decides the loop by
noise, whatever it saves.

Each training runs in a spawned process of one thread (--power-workers at once).
"""

from __future__ import annotations

import json
import multiprocessing
import statistics
import time
from dataclasses import replace
from pathlib import Path

import torch

from core.data.backbones import build_backbone
from core.data.datasets import load_dataset
from core.ir.graph import OperatorGraph
from core.ir.serialize import load_operator
from core.train.early_stop import stop_epoch
from core.train.proxy import CHANCE_FACTOR, train_proxy
from core.train.screening import candidate_network, load_split
from core.train.settings import EvalSettings, TrainConfig
from tests.support import EXAMPLES, ROOT

ORIGINAL = "original"
#: operators known to learn on the proxy task, by name: their files
LEARNERS = {
    "equal operator (rearranged convolution)": ROOT / "tests" / "core" / "data" / "rearranged_conv.json",
    "depthwise-separable": EXAMPLES / "depthwise_separable.json",
    "shift_conv": EXAMPLES / "shift_conv.json",
}


def _network(name: str, settings: EvalSettings, classes: int) -> torch.nn.Module:
    if name == ORIGINAL:
        return build_backbone(settings.spec, classes, settings.seed)
    graph: OperatorGraph = load_operator(LEARNERS[name])
    return candidate_network(settings, classes, graph)[0]


def _train(task: tuple[str, EvalSettings, TrainConfig]) -> tuple[str, int, list[float], str, float]:
    """One network, one seed, every epoch, in a worker process of one thread: its curve."""
    name, settings, config = task
    torch.set_num_threads(1)
    split = load_split(settings, load_dataset(settings.dataset, settings.resolution))
    start = time.perf_counter()
    run = train_proxy(_network(name, settings, split.train.num_classes), split, config)
    return name, settings.seed, run.accuracy_per_epoch, run.outcome, time.perf_counter() - start


def _key(name: str, settings: EvalSettings, config: TrainConfig) -> str:
    return (
        f"{name} | {settings.dataset_label} limit {settings.limit} | {settings.spec.label} | "
        f"{config.epochs} epochs | seed {settings.seed}"
    )


def curves(settings: EvalSettings, config: TrainConfig, seeds: range, workers: int, cache: Path) -> dict:
    """Every network's curve at every seed, from the cache where it is there already."""
    found = json.loads(cache.read_text()) if cache.exists() else {}
    names = (ORIGINAL, *LEARNERS)
    tasks = [(n, replace(settings, seed=s), config) for s in seeds for n in names]
    tasks = [t for t in tasks if _key(*t) not in found]
    print(
        f"  {len(seeds) * len(names) - len(tasks)} trainings from {cache}, {len(tasks)} to run in {workers} process(es)"
    )
    if tasks:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for name, seed, curve, outcome, seconds in pool.imap(_train, tasks):
                found[_key(name, replace(settings, seed=seed), config)] = {
                    "curve": curve,
                    "outcome": outcome,
                    "seconds": seconds,
                }
                cache.write_text(json.dumps(found, indent=1))
                print(f"    {name}, seed {seed}: {' '.join(f'{a:.3f}' for a in curve)} in {seconds:.0f} s", flush=True)
    return {n: [found[_key(n, replace(settings, seed=s), config)] for s in seeds] for n in names}


def as_written(curve: list[float], epochs: int, best: list[float], theta: float, floor: float) -> int | None:
    """Canvas's rule as its paper writes it, the reference: each epoch's own accuracy against
    lambda(e) x the best curve's at that epoch, from the first (`floor` unused)."""
    return next((e for e in range(1, epochs) if curve[e - 1] < (theta + (1 - theta) * e / epochs) * best[e - 1]), None)


def false_stops(
    learners: list[list[float]], originals: list[list[float]], epochs: int, theta: float, rule
) -> list[int]:
    """The epoch `rule` stops each (learner, original as the best curve) pair at; 0 where it
    runs to the end (10 classes: the first epoch's floor is CHANCE_FACTOR x 0.1)."""
    return [rule(c, epochs, best, theta, CHANCE_FACTOR / 10) or 0 for c in learners for best in originals]


def early_stop(settings: EvalSettings, seeds: int, epochs: int, workers: int, results: Path) -> None:
    config = TrainConfig(epochs=epochs)
    print(
        f"Early stop against operators known to learn: {settings.dataset_label} (limit {settings.limit}), "
        f"{settings.spec.label}, {epochs} epochs, seeds 0-{seeds - 1}, theta {config.theta} "
        f"(core.train.early_stop: the highest accuracy by epoch e >= lambda(e) x the best curve's; after the "
        f"first, {CHANCE_FACTOR:g}x chance)"
    )
    runs = curves(settings, config, range(seeds), workers, results / "early_stop.json")
    originals = [r["curve"] for r in runs[ORIGINAL] if r["outcome"] == "trained"]
    for name, rs in runs.items():
        shown = "; ".join(" ".join(f"{a:.2f}" for a in r["curve"]) for r in rs)
        print(f"  {name}: {shown} ({statistics.mean(r['seconds'] for r in rs):.0f} s per training)")
    for label, rule in (("the rule", stop_epoch), ("Canvas's rule as written (each epoch's own accuracy)", as_written)):
        stops: list[int] = []
        for name in LEARNERS:
            ours = false_stops([r["curve"] for r in runs[name]], originals, epochs, config.theta, rule)
            stops += ours
            at = ", ".join(f"epoch {e}" for e in sorted(e for e in ours if e))
            print(
                f"  {label}, {name}: stopped in {sum(map(bool, ours))} of {len(ours)} pairs{f' ({at})' if at else ''}"
            )
        print(
            f"  {label}: false-stop rate {sum(map(bool, stops))} of {len(stops)} (learner, best curve) pairs "
            f"({sum(map(bool, stops)) / max(len(stops), 1):.0%})"
        )
