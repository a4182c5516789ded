"""Accuracy-side speed on this machine.

Figure 1: Fisher Potential screening throughput, candidates per minute: each candidate is an
example operator with one choice of its group count G, placed in a ResNet-18 at reduced size
(built, its convolutions replaced, one forward and one backward pass on a real minibatch),
judged against the original network's score over the same layers (computed once per layer
set). Published reference (NAS-PTE): 1000 candidates in under 5 minutes on a CPU, i.e.
>= 200 per minute.
Figure 2: proxy-training time per epoch on the digits, original network and with operators.

    python -m tests.benchmarks.bench_accuracy [--candidates 48] [--width 16] [--resolution 16]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import torch

from core.analysis.fisher import fisher_potential, passes_fisher
from core.data.backbones import build_backbone
from core.data.replace import replace_convs
from core.ir.serialize import load_operator
from core.train.candidate import fisher_batch, load_split
from core.train.proxy import TrainConfig, train_proxy
from core.train.settings import EvalSettings
from tests.support import ROOT

EXAMPLES = ROOT / "resources" / "examples"
PAPER_PER_MINUTE = 1000 / 5
GROUPS = (1, 2, 4, 8)


def candidates():
    """(label, graph) forever: every example, and every G choice for those that have one."""
    variants = []
    for path in sorted(EXAMPLES.glob("*.json")):
        graph = load_operator(path)
        if "G" in graph.bindings:
            for g in GROUPS:
                variant = load_operator(path)
                variant.bindings = {**variant.bindings, "G": g}
                variants.append((f"{path.stem} G={g}", variant))
        else:
            variants.append((path.stem, graph))
    return itertools.cycle(variants)


def screening(settings: EvalSettings, count: int) -> None:
    split = load_split(settings)
    images, labels = fisher_batch(split, settings.fisher_batch, settings.seed)
    originals: dict[tuple[str, ...], float] = {}
    passed, times = 0, []
    start = time.perf_counter()
    for _label, graph in itertools.islice(candidates(), count):
        t = time.perf_counter()
        net = build_backbone(settings.spec, split.train.num_classes, settings.seed)
        report = replace_convs(net, graph, settings.resolution)
        layers = tuple(report.replaced)
        score = fisher_potential(net, layers, images, labels).total
        if layers not in originals:
            original = build_backbone(settings.spec, split.train.num_classes, settings.seed)
            originals[layers] = fisher_potential(original, layers, images, labels).total
        passed += passes_fisher(score, originals[layers])
        times.append(time.perf_counter() - t)
    total = time.perf_counter() - start
    per_minute = count / total * 60
    print(
        f"Fisher screening, {settings.spec.label} at {settings.resolution}px, "
        f"minibatch {settings.fisher_batch}, {torch.get_num_threads()} thread(s):"
    )
    print(
        f"  {count} candidates in {total:.1f} s: {per_minute:.0f} per minute "
        f"(median {1e3 * statistics.median(times):.0f} ms, max {1e3 * max(times):.0f} ms each)"
    )
    print(
        f"  1000 candidates would take {1000 / per_minute:.1f} min; reference < 5 min "
        f"(ratio to the reference rate: {per_minute / PAPER_PER_MINUTE:.2f}x)"
    )
    print(
        f"  {passed} of {count} passed the Fisher rule ({count - passed} rejected); "
        f"{len(originals)} original-network scores computed"
    )


def training(settings: EvalSettings, epochs: int) -> None:
    split = load_split(settings)
    config = TrainConfig(epochs=epochs, batch_size=64)
    print(
        f"Proxy training, {settings.spec.label} at {settings.resolution}px, {len(split.train)} training "
        f"images, batch {config.batch_size}:"
    )
    baseline = None
    for name in (None, "depthwise_separable", "grouped_conv", "involution"):
        net = build_backbone(settings.spec, split.train.num_classes, settings.seed)
        if name is not None:
            replace_convs(net, load_operator(EXAMPLES / f"{name}.json"), settings.resolution)
        result = train_proxy(net, split, config)
        per_epoch = statistics.mean(result.seconds_per_epoch)
        baseline = baseline or per_epoch
        print(
            f"  {name or 'original':20} {per_epoch:6.2f} s/epoch ({per_epoch / baseline:.1f}x the original), "
            f"accuracy after {epochs} epoch(s) {result.accuracy:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=48)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--resolution", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    settings = EvalSettings(backbone="resnet18", width=args.width, resolution=args.resolution)
    screening(settings, args.candidates)
    training(settings, args.epochs)


if __name__ == "__main__":
    main()
