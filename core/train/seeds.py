"""A network's reported accuracy: trained again with several seeds, each tested on the test
split, which nothing that chose the network (early stop, the margin, ranking) ever reads.

Each seed sets the train/validation split, the initial weights and the order of the examples;
the test split is the same for every seed (core.data.datasets). The seeds are those after the
one the search selected with (core.train.paired.report_seeds), so the lucky run that chose a
candidate is not also its report. Training runs every epoch (no early stop) where TrainConfig
says (its device).
Two networks trained with the same seeds compare pairwise (core.train.paired). Imports torch:
worker processes and benchmarks only."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace

from core.data.assignment import Assignment
from core.data.backbones import build_backbone
from core.data.datasets import ImageDataset, load_dataset
from core.ir.graph import OperatorGraph

from .proxy import accuracy, train_proxy
from .results import SeedRun
from .screening import candidate_network, load_split
from .settings import EvalSettings, TrainConfig

Progress = Callable[[float, str], None]


def train_over_seeds(
    stand_in: OperatorGraph | Assignment | None,
    settings: EvalSettings,
    config: TrainConfig,
    seeds: Sequence[int],
    progress: Progress | None = None,
    data: ImageDataset | None = None,
) -> list[SeedRun]:
    """Train the settings' backbone (its width and resolution; with the operator in every layer
    it fits, an assignment's operators in theirs, or as it is for None) once per seed for all of
    config's epochs, and test each on the test split (of `data` when the caller loaded the
    settings' dataset already). EvaluationError when the operator fits no layer."""
    progress = progress or (lambda fraction, message: None)
    data = data or load_dataset(settings.dataset, settings.resolution)
    runs = []
    for i, seed in enumerate(seeds):
        seeded = replace(settings, seed=seed)
        split = load_split(seeded, data)
        if stand_in is None:
            net = build_backbone(seeded.spec, split.train.num_classes, seed)
        else:
            net, _ = candidate_network(seeded, split.train.num_classes, stand_in)

        def step(fraction: float, message: str, i: int = i, seed: int = seed) -> None:
            progress((i + fraction) / len(seeds), f"seed {seed} ({i + 1} of {len(seeds)}): {message}")

        start = time.perf_counter()
        run = train_proxy(net, split, replace(config, seed=seed), progress=step)
        tested = None if run.accuracy is None else accuracy(net, split.test, amp=config.amp)
        runs.append(SeedRun(seed, tested, run.accuracy, run.outcome, time.perf_counter() - start))
    return runs


def originals_known(
    store, settings: EvalSettings, config: TrainConfig, operator: dict | None = None
) -> dict[int, float | None]:
    """The original network's test accuracy by seed (the backbone with `operator`, or as it is for
    None), as finished test jobs in `store` found it on the same task (the same settings and
    training): paired jobs that trained or were given it, and unpaired tests of that network
    itself (the discovery loop's test of its original), so that jobs share its trainings. Empty
    without a store (a context that has none)."""
    if store is None:
        return {}
    from core.jobs.queue import DONE, JobQueue

    wanted = json.loads(json.dumps([operator, settings.to_payload(), asdict(config)]))  # as stored
    known: dict[int, float | None] = {}
    for job in JobQueue(store).jobs([DONE]):
        payload, result = job.payload, job.result or {}
        if job.kind != "test" or payload.get("training") != wanted[2]:
            continue
        seeds = [run["seed"] for run in result.get("runs", ())]
        if payload.get("pair", True) and result.get("original"):
            original = [payload.get("original_operator"), payload.get("original_settings") or payload.get("settings")]
            if original == wanted[:2]:
                known.update(zip(seeds, result["original"]))
        elif not payload.get("pair", True) and [payload.get("operator"), payload.get("settings")] == wanted[:2]:
            known.update(zip(seeds, (run["accuracy"] for run in result["runs"])))
    return known
