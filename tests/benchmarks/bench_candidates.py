"""How fast searched candidates train: the proxy network with each candidate in every convolution
it fits, its modules generated now and as before einsum chains (core.codegen.einsum_chain; the
"before" modules are the same code generator with that one step switched off), against the
original network, all in the same run on the default proxy task (digits-shifted, ResNet-18
width 16 at 24 px, batch 64, one torch thread as the training workers run).

Figure 1 (too slow): a seeded sample of candidates from MCTS (as the discovery loop asks it,
network-wide FLOPs cap, every score told 0) and from the Canvas sampler on conv2d; each
network's epoch projected from its first --steps training steps, timed through
core.train.proxy.train_proxy's progress hook from the epoch's start as its too-slow rule does
(and stopped, as the loop stops it, at the step whose projection is over the limit), against
SLOW (10) x the original's epoch (core.search.loop's limit; the median of 3 one-
epoch runs of the original here). The loop stopped 84 of 282 trained candidates as too slow.
Figure 2 (slowest kinds): the --slowest candidates whose networks were slowest before, timed
again in turns with the original: one training step (forward, loss, backward, SGD step),
median of --reps after a warm-up step, CPU ms (wall ms), and the largest tensor the network's
forward pass makes (MB), before and after.

    python -m tests.benchmarks.bench_candidates [--samples 200] [--seed 0] [--steps 3]
        [--slowest 6] [--reps 3] [--skip before,slowest]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from core.codegen import torch_layers
from core.data.backbones import build_backbone
from core.data.datasets import Split
from core.data.swap_convs import conv_input_sizes, replace_convs
from core.ir.graph import OperatorGraph
from core.search.driver import make_strategy
from core.search.loop import SLOW
from core.search.settings import SearchConfig
from core.train.proxy import TrainConfig, train_proxy
from core.train.screening import load_split
from core.train.settings import EvalSettings
from tests.benchmarks.bench_accuracy import Timing, in_turns, load
from tests.core.torch_checks import largest_value
from tests.support import EXAMPLES

STRATEGIES = ("mcts", "canvas")


@contextlib.contextmanager
def before_einsum_chains() -> Iterator[None]:
    """Modules generated as before core.codegen.einsum_chain: no chain is found."""
    found = torch_layers.einsum_chains
    torch_layers.einsum_chains = lambda plan, taken: {}
    try:
        yield
    finally:
        torch_layers.einsum_chains = found


@dataclass
class Task:
    settings: EvalSettings
    config: TrainConfig
    split: Split
    sizes: dict

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(len(self.split.train) / self.config.batch_size)

    def network(self, graph: OperatorGraph | None = None) -> torch.nn.Module | None:
        """The proxy network, with `graph` in every convolution it fits (None when it fits none)."""
        net = build_backbone(self.settings.spec, self.split.train.num_classes, self.settings.seed)
        if graph is not None and not replace_convs(net, graph, self.settings.resolution, sizes=self.sizes).replaced:
            return None
        return net


class _Enough(Exception):
    """Raised from the progress hook once enough steps are timed."""


def projected_epoch(task: Task, net: torch.nn.Module, steps: int, limit: float) -> float | None:
    """Seconds an epoch would take, from the first `steps` steps, as train_proxy's rule projects
    it (from the epoch's start); like the loop, it stops at the step whose projection is over
    `limit`. None when training diverged first."""
    stamps: list[float] = []

    def progress(fraction: float, message: str) -> None:
        stamps.append(time.perf_counter())
        if len(stamps) == steps:
            raise _Enough

    start = time.perf_counter()
    try:
        run = train_proxy(net, task.split, dataclasses.replace(task.config, max_epoch_seconds=limit), progress=progress)
    except _Enough:
        return (stamps[-1] - start) / steps * task.steps_per_epoch
    if run.outcome != "too slow":
        return None
    return (time.perf_counter() - start) / (len(stamps) + 1) * task.steps_per_epoch


def original_epoch(task: Task, runs: int = 3) -> float:
    """The original network's epoch (training and validation), median of `runs` one-epoch runs."""
    one = TrainConfig(epochs=1, batch_size=task.config.batch_size)
    return statistics.median(train_proxy(task.network(), task.split, one).seconds_per_epoch[0] for _ in range(runs))


def sample(strategy: str, count: int, seed: int, settings: EvalSettings) -> list[tuple[str, OperatorGraph]]:
    """Distinct candidates as the discovery loop's strategy proposes them (every score told 0)."""
    template = json.loads((EXAMPLES / "conv2d.json").read_text())
    proposer = make_strategy(SearchConfig(template=template, strategy=strategy, seed=seed), (settings.spec,))
    found: list[tuple[str, OperatorGraph]] = []
    while len(found) < count:
        batch = proposer.ask(1)
        if not batch:
            break
        for c in batch:
            found.append((c.key, c.graph))
            proposer.tell(c.key, 0.0)
    return found


def too_slow(task: Task, samples: dict, steps: int, before: bool) -> dict[str, tuple[float, float | None]]:
    """Figure 1; returns key -> (projected epoch now, before or None) for those that did not diverge."""
    limit = SLOW * original_epoch(task)
    print(
        f"Too slow: projected epoch over {SLOW} x the original's ({limit / SLOW:.2f} s, limit {limit:.1f} s), "
        f"from the first {steps} steps of {task.steps_per_epoch}; {torch.get_num_threads()} thread(s); {load()}"
    )
    projected: dict[str, tuple[float, float | None]] = {}
    for strategy, candidates in samples.items():
        fits = diverged = over_after = over_before = 0
        for key, graph in candidates:
            net = task.network(graph)
            if net is None:
                continue
            fits += 1
            after = projected_epoch(task, net, steps, limit)
            earlier = None
            if before:
                with before_einsum_chains():
                    earlier = projected_epoch(task, task.network(graph), steps, limit)
            if after is None:
                diverged += 1
                continue
            projected[key] = (after, earlier)
            over_after += after > limit
            over_before += earlier is not None and earlier > limit
        shown = f"{over_before} before, " if before else ""
        print(
            f"  {strategy:7} {len(candidates)} sampled, {fits} fit a layer, {diverged} diverged in the first steps: "
            f"over the limit {shown}{over_after} now"
        )
    slowest = sorted(projected.items(), key=lambda kv: -kv[1][0])[:5]
    worst = ", ".join(f"{key[:8]} {after / limit * SLOW:.1f}x" for key, (after, _) in slowest)
    print(f"  slowest now (projected epoch / original's): {worst}; {load()}")
    return projected


def slowest_kinds(task: Task, graphs: dict[str, OperatorGraph], reps: int) -> None:
    """Figure 2: each candidate network's training step before and after, in turns with the original's."""
    split, batch = task.split, task.config.batch_size
    x = torch.from_numpy(split.train.images[:batch])
    y = torch.from_numpy(split.train.labels[:batch])

    def stepper(net: torch.nn.Module):
        optimizer = torch.optim.SGD(net.parameters(), lr=task.config.lr, momentum=task.config.momentum)

        def step() -> None:
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(net(x), y).backward()
            optimizer.step()

        return step

    print(
        f"Slowest kinds: one training step (batch {batch}), median of {reps} after a warm-up step, "
        f"CPU ms (wall ms); the largest tensor of the forward pass; {load()}"
    )
    print(f"    {'candidate':10} {'before':>19} {'now':>19} {'original':>19}  now/original  before/now  largest MB")
    original = task.network()
    for key, graph in graphs.items():
        now = task.network(graph)
        with before_einsum_chains():
            earlier = task.network(graph)
        assert now is not None and earlier is not None
        earlier.load_state_dict(now.state_dict())
        with torch.no_grad():
            torch.testing.assert_close(now(x), earlier(x), atol=1e-3, rtol=1e-3)
        timings = in_turns([stepper(earlier), stepper(now), stepper(original)], reps, warm_up=1)
        b, n, o = timings
        sizes = [largest_value(net, x) * 4 / 2**20 for net in (earlier, now)]
        cells = " ".join(f"{1e3 * t.cpu:8.1f} ({1e3 * t.wall:7.1f})" for t in timings)
        print(
            f"    {key[:10]:10} {cells}  {n.cpu / o.cpu:11.2f}x  {b.cpu / n.cpu:9.1f}x  "
            f"{sizes[0]:.1f} -> {sizes[1]:.1f}{_note(timings)}"
        )
    print(f"  {load()}")


def _note(timings: list[Timing]) -> str:
    return "  (noisy)" if any(t.note for t in timings) else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200, help="candidates, shared between MCTS and Canvas")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=3, help="training steps timed per candidate")
    parser.add_argument("--slowest", type=int, default=6, help="candidates in figure 2")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--skip", default="", help="comma-separated: before (figure 1 now only), slowest")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    torch.set_num_threads(1)
    settings = EvalSettings()
    split = load_split(settings)
    net = build_backbone(settings.spec, split.train.num_classes, settings.seed)
    task = Task(settings, TrainConfig(), split, conv_input_sizes(net, settings.resolution))
    samples = {s: sample(s, args.samples // len(STRATEGIES), args.seed, settings) for s in STRATEGIES}
    projected = too_slow(task, samples, args.steps, "before" not in skip)
    if "slowest" not in skip and "before" not in skip:
        graphs = {key: graph for candidates in samples.values() for key, graph in candidates}
        order = sorted(projected, key=lambda key: -(projected[key][1] or 0.0))
        slowest_kinds(task, {key: graphs[key] for key in order[: args.slowest]}, args.reps)


if __name__ == "__main__":
    main()
