"""Accuracy-side speed on this machine: how fast a network with a candidate operator trains.

Figure 1, modules: forward + backward time of each bundled example's generated module (torch's
own layers where a subgraph is one, core.codegen.torch_layers), against the same module one
line per primitive and against hand-written torch for the same layer
(tests/benchmarks/hand_layers.py, same weights, checked equal first), at the sizes of proxy
training's four ResNet-18 stages. Target: the generated module within 1.2x of the
hand-written one.
Figure 2, training: time per proxy-training epoch (the training steps and the validation
pass, as core.train.proxy runs them) of the original network and, for each bundled example,
of the network with the generated modules and of the same network with the hand-written
layers (same weights, outputs checked equal first). Target: within 1.5x of the original.

Times are medians over repetitions taken in turns (module after module, network after
network), so a change in the machine's load falls on all of them alike. Each is measured
both as wall time and as this process's CPU time; on a shared machine the CPU time is what
the computation costs, the wall time also holds the waits for a core, so ratios are taken
of CPU times. The load average is printed before and after each figure.

Fisher Potential screening throughput is in bench_discovery.

    python -m tests.benchmarks.bench_accuracy [--quick] [--only involution,conv2d] [--skip modules,training]
        [--width 16] [--resolution 16] [--epochs 1] [--rounds 3] [--reps 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.codegen import build_module
from core.data.backbones import build_backbone
from core.data.swap_convs import replace_convs
from core.ir.serialize import load_operator
from core.train.proxy import TrainConfig, train_proxy
from core.train.screening import load_split
from core.train.settings import EvalSettings
from tests.benchmarks.hand_layers import hand_network, hand_written
from tests.support import ROOT

EXAMPLES = ROOT / "resources" / "examples"

# (label, batch, layer sizes): proxy training's ResNet-18 (width 16, 16 px), stage by stage;
# g (Syno's operators) is chosen to divide the channels as C_out / (g * s) needs
MODULE_SIZES = (
    ("stage 1", 64, {"C_in": 16, "C_out": 16, "H": 16, "W": 16, "K": 3, "G": 4, "g": 4, "s": 2}),
    ("stage 2", 64, {"C_in": 32, "C_out": 32, "H": 8, "W": 8, "K": 3, "G": 4, "g": 8, "s": 2}),
    ("stage 3", 64, {"C_in": 64, "C_out": 64, "H": 4, "W": 4, "K": 3, "G": 4, "g": 32, "s": 2}),
    ("stage 4", 64, {"C_in": 128, "C_out": 128, "H": 2, "W": 2, "K": 3, "G": 4, "g": 32, "s": 2}),
)
QUICK_STAGES = ("stage 1", "stage 3")
MODULE_TARGET = 1.2
TRAINING_TARGET = 1.5
WARM_UP = 5  # runs of each module before timing: oneDNN builds its kernels at the first calls
NOISY = 0.25  # a spread (interquartile range / median) above this marks a timing as noisy


@dataclass(frozen=True)
class Timing:
    """Median wall and CPU seconds over repetitions, and how widely the CPU times spread."""

    wall: float
    cpu: float
    spread: float

    @classmethod
    def of(cls, samples: list[tuple[float, float]]) -> Timing:
        walls, cpus = [w for w, _ in samples], [c for _, c in samples]
        cpu = statistics.median(cpus)
        spread = 0.0
        if len(cpus) >= 4:
            q1, _, q3 = statistics.quantiles(cpus, n=4)
            spread = (q3 - q1) / cpu if cpu else 0.0
        return cls(statistics.median(walls), cpu, spread)

    @property
    def note(self) -> str:
        return "  (noisy)" if self.spread > NOISY else ""


def in_turns(runs: list[Callable[[], object]], reps: int, warm_up: int = 0) -> list[Timing]:
    """Run each callable `warm_up` times, then `reps` times each in turns; their Timings."""
    samples: list[list[tuple[float, float]]] = [[] for _ in runs]
    for rep in range(warm_up + reps):
        for run, seen in zip(runs, samples):
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            if rep >= warm_up:
                seen.append((time.perf_counter() - wall, time.process_time() - cpu))
    return [Timing.of(s) for s in samples]


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


def modules(names: list[str], reps: int, stages: tuple[str, ...]) -> float:
    """Figure 1; returns the worst generated / hand-written ratio."""
    print(
        f"Generated modules, forward + backward, {torch.get_num_threads()} thread(s), median of {reps} "
        f"after {WARM_UP} warm-up runs, CPU ms (wall ms); {load()}"
    )
    worst = 0.0
    for label, batch, sizes in MODULE_SIZES:
        if label not in stages:
            continue
        print(
            f"  {label}: batch {batch}, {sizes['C_in']} channels, {sizes['H']}x{sizes['W']} (K=3, G=4, g={sizes['g']})"
        )
        print(f"    {'example':22} {'generated':>17} {'per-primitive':>17} {'hand-written':>17}  generated/hand")
        for name in names:
            graph = load_operator(EXAMPLES / f"{name}.json")
            bindings = {k: v for k, v in sizes.items() if k in graph.mentioned_variables()}
            torch.manual_seed(0)
            fast = build_module(graph, bindings)
            slow = build_module(graph, bindings, layers=False)
            slow.load_state_dict(fast.state_dict())
            hand = hand_written(name, fast, bindings)
            x = torch.randn(batch, sizes["C_in"], sizes["H"], sizes["W"], requires_grad=True)
            with torch.no_grad():
                torch.testing.assert_close(fast(x), hand(x), atol=1e-3, rtol=1e-3)
                torch.testing.assert_close(fast(x), slow(x), atol=1e-3, rtol=1e-3)
            ours, primitives, theirs = in_turns(
                [lambda m=m, x=x: m(x).sum().backward() for m in (fast, slow, hand)], reps, WARM_UP
            )
            worst = max(worst, ours.cpu / theirs.cpu)
            cells = " ".join(f"{1e3 * t.cpu:6.2f} ({1e3 * t.wall:6.2f}) ms" for t in (ours, primitives, theirs))
            print(
                f"    {name:22} {cells}  {ours.cpu / theirs.cpu:5.2f}x "
                f"(per-primitive {primitives.cpu / theirs.cpu:.2f}x){ours.note or theirs.note}"
            )
    verdict = "met" if worst <= MODULE_TARGET else "NOT met"
    print(f"  worst generated/hand-written: {worst:.2f}x (target <= {MODULE_TARGET}x: {verdict}); {load()}")
    return worst


def training(names: list[str], settings: EvalSettings, config: TrainConfig, rounds: int) -> None:
    """Figure 2: every network trained `rounds` times from its initial weights, in turns."""
    split = load_split(settings)
    batches = f"{config.max_batches} batches" if config.max_batches else f"{len(split.train)} training images"
    print(
        f"Proxy training, {settings.spec.label} at {settings.resolution}px, {batches} + validation per epoch, "
        f"batch {config.batch_size}, {config.epochs} epoch(s), {torch.get_num_threads()} thread(s), median of "
        f"{rounds} round(s); s/epoch CPU (wall); {load()}"
    )
    networks: dict[str, Callable[[], torch.nn.Module]] = {"original": lambda: _network(settings, split)}
    for name in names:
        graph = load_operator(EXAMPLES / f"{name}.json")
        generated, report = _network(settings, split, graph)
        if not report.replaced:
            print(f"  {name:22} replaces no convolution of {settings.spec.label}")
            continue
        hand = hand_network(generated, report, graph, name)
        # batch statistics, as in training: in eval mode a fresh batch norm (mean 0, variance 1)
        # normalises nothing, and involution's products of activations overflow to inf by layer 4
        with torch.no_grad():
            x = torch.from_numpy(split.val.images[:16])
            torch.testing.assert_close(generated(x), hand(x), atol=1e-3, rtol=1e-3)
        replaced = f"{len(report.replaced)} of {len(report.layers)} convs"
        networks[f"{name} generated"] = lambda g=graph: _network(settings, split, g)[0]
        networks[f"{name} hand-written"] = lambda g=graph, n=name: _hand(settings, split, g, n)
        print(f"  {name:22} replaces {replaced}")
    for build in networks.values():  # oneDNN's first calls at each layer shape, untimed
        train_proxy(build(), split, TrainConfig(epochs=1, batch_size=config.batch_size, max_batches=2))
    accuracy: dict[str, float | None] = {}
    samples: dict[str, list[tuple[float, float]]] = {label: [] for label in networks}
    for _ in range(rounds):
        for label, build in networks.items():
            network = build()  # not timed
            wall, cpu = time.perf_counter(), time.process_time()
            accuracy[label] = train_proxy(network, split, config).accuracy
            samples[label].append(
                ((time.perf_counter() - wall) / config.epochs, (time.process_time() - cpu) / config.epochs)
            )
    timings = {label: Timing.of(s) for label, s in samples.items()}
    _training_table(names, timings, accuracy)
    print(f"  {load()}")


def _network(settings: EvalSettings, split, graph=None):
    network = build_backbone(settings.spec, split.train.num_classes, settings.seed)
    if graph is None:
        return network
    return network, replace_convs(network, graph, settings.resolution)


def _hand(settings: EvalSettings, split, graph, name: str) -> torch.nn.Module:
    generated, report = _network(settings, split, graph)
    return hand_network(generated, report, graph, name)


def _training_table(names: list[str], timings: dict[str, Timing], accuracy: dict[str, float | None]) -> None:
    original = timings["original"]

    def cell(t: Timing) -> str:
        return f"{t.cpu:6.2f} ({t.wall:6.2f}) s"

    def acc(label: str) -> str:
        value = accuracy.get(label)
        return "diverged" if value is None else f"{value:.3f}"

    print(
        f"    {'network':22} {'generated':>17} {'hand-written':>17}  {'gen/hand':>8}  {'gen/original':>12}  "
        f"{'hand/original':>13}  accuracy gen, hand"
    )
    print(f"    {'original':22} {cell(original)}{original.note}  accuracy {acc('original')}")
    worst = 0.0
    for name in names:
        gen, hand = timings.get(f"{name} generated"), timings.get(f"{name} hand-written")
        if gen is None or hand is None:
            continue
        worst = max(worst, gen.cpu / original.cpu)
        print(
            f"    {name:22} {cell(gen)} {cell(hand)}  {gen.cpu / hand.cpu:7.2f}x  {gen.cpu / original.cpu:11.2f}x  "
            f"{hand.cpu / original.cpu:12.2f}x  {acc(f'{name} generated')}, {acc(f'{name} hand-written')}"
            f"{gen.note or hand.note}"
        )
    verdict = "met" if worst <= TRAINING_TARGET else "NOT met"
    print(f"  worst generated/original: {worst:.2f}x (target <= {TRAINING_TARGET}x: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short check: 2 stages, 5 reps, 6 batches, 1 round")
    parser.add_argument("--only", default="", help="comma-separated example names (default: every bundled example)")
    parser.add_argument("--skip", default="", help="comma-separated: modules, training")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--resolution", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="times each network is trained (median)")
    parser.add_argument("--reps", type=int, default=20, help="forward + backward runs per module")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (training workers use 1)")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    every = sorted(p.stem for p in EXAMPLES.glob("*.json"))
    names = [n for n in args.only.split(",") if n] or every
    unknown = sorted(set(names) - set(every))
    if unknown:
        parser.error(f"no bundled example {', '.join(unknown)} (known: {', '.join(every)})")
    torch.set_num_threads(args.threads)
    stages = QUICK_STAGES if args.quick else tuple(label for label, _, _ in MODULE_SIZES)
    if "modules" not in skip:
        modules(names, 5 if args.quick else args.reps, stages)
    if "training" not in skip:
        settings = EvalSettings(backbone="resnet18", width=args.width, resolution=args.resolution)
        config = TrainConfig(epochs=args.epochs, batch_size=64, max_batches=6 if args.quick else None)
        training(names, settings, config, 1 if args.quick else args.rounds)


if __name__ == "__main__":
    main()
