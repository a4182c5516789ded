"""Accuracy-side speed on this machine.

Figure 1: forward + backward time of each bundled example's generated module (torch's own
layers where a subgraph is one), against the same module one line per primitive and against
hand-written torch for the same layer (tests/benchmarks/hand_layers.py, same weights, checked
equal first), at the sizes of proxy training's first and third ResNet-18 stages. Target: the
generated module within 1.2x of the hand-written one.
Figure 2: proxy-training time per epoch on the digits, the original network and the network
with each bundled example. Target: within 1.5x of the original.

Fisher Potential screening throughput is in bench_discovery.

    python -m tests.benchmarks.bench_accuracy [--width 16] [--resolution 16] [--reps 20] [--skip modules,training]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from core.codegen import build_module
from core.data.backbones import build_backbone
from core.data.replace import replace_convs
from core.ir.serialize import load_operator
from core.train.proxy import TrainConfig, train_proxy
from core.train.screening import load_split
from core.train.settings import EvalSettings
from tests.benchmarks.hand_layers import hand_written
from tests.support import ROOT

EXAMPLES = ROOT / "resources" / "examples"


# (label, batch, layer sizes): proxy training's ResNet-18 (width 16, 16 px) at its first and third stages
MODULE_SIZES = (
    ("stage 1", 64, {"C_in": 16, "C_out": 16, "H": 16, "W": 16, "K": 3, "G": 4, "g": 4, "s": 2}),
    ("stage 3", 64, {"C_in": 64, "C_out": 64, "H": 4, "W": 4, "K": 3, "G": 4, "g": 32, "s": 2}),
)
MODULE_TARGET = 1.2


def forward_backward_ms(modules: list[torch.nn.Module], x: torch.Tensor, reps: int) -> list[float]:
    """Median forward + backward time of each module on x, the modules taking turns (so that
    a change in the machine's load falls on all of them alike)."""
    times: list[list[float]] = [[] for _ in modules]
    for rep in range(reps + 3):
        for module, seen in zip(modules, times):
            start = time.perf_counter()
            module(x).sum().backward()
            if rep >= 3:  # the first runs warm up oneDNN's caches
                seen.append(1e3 * (time.perf_counter() - start))
    return [statistics.median(t) for t in times]


def modules(reps: int) -> None:
    print(f"Generated modules, forward + backward, {torch.get_num_threads()} thread(s), median of {reps}:")
    worst = 0.0
    for label, batch, sizes in MODULE_SIZES:
        print(
            f"  {label}: batch {batch}, {sizes['C_in']} channels, {sizes['H']}x{sizes['W']} (K=3, G=4, g={sizes['g']})"
        )
        print(f"    {'example':22} {'generated':>10} {'per-primitive':>14} {'hand-written':>13}  generated/hand")
        for path in sorted(EXAMPLES.glob("*.json")):
            graph = load_operator(path)
            bindings = {k: v for k, v in sizes.items() if k in graph.mentioned_variables()}
            torch.manual_seed(0)
            fast = build_module(graph, bindings)
            slow = build_module(graph, bindings, layers=False)
            slow.load_state_dict(fast.state_dict())
            hand = hand_written(path.stem, fast, bindings)
            x = torch.randn(batch, sizes["C_in"], sizes["H"], sizes["W"], requires_grad=True)
            with torch.no_grad():
                torch.testing.assert_close(fast(x), hand(x), atol=1e-3, rtol=1e-3)
                torch.testing.assert_close(fast(x), slow(x), atol=1e-3, rtol=1e-3)
            ours, primitives, theirs = forward_backward_ms([fast, slow, hand], x, reps)
            worst = max(worst, ours / theirs)
            print(
                f"    {path.stem:22} {ours:8.2f} ms {primitives:11.2f} ms {theirs:10.2f} ms  "
                f"{ours / theirs:5.2f}x (per-primitive {primitives / theirs:.2f}x)"
            )
    verdict = "met" if worst <= MODULE_TARGET else "NOT met"
    print(f"  worst generated/hand-written: {worst:.2f}x (target <= {MODULE_TARGET}x: {verdict})")


def training(settings: EvalSettings, epochs: int) -> None:
    split = load_split(settings)
    config = TrainConfig(epochs=epochs, batch_size=64)
    print(
        f"Proxy training, {settings.spec.label} at {settings.resolution}px, {len(split.train)} training "
        f"images, batch {config.batch_size}, {torch.get_num_threads()} thread(s):"
    )
    warm_up = build_backbone(settings.spec, split.train.num_classes, settings.seed)
    train_proxy(warm_up, split, TrainConfig(epochs=1, batch_size=64, max_batches=3))  # oneDNN's first calls
    baseline = None
    for name in (None, *sorted(p.stem for p in EXAMPLES.glob("*.json"))):
        net = build_backbone(settings.spec, split.train.num_classes, settings.seed)
        replaced = ""
        if name is not None:
            report = replace_convs(net, load_operator(EXAMPLES / f"{name}.json"), settings.resolution)
            replaced = f", {len(report.replaced)} of {len(report.layers)} convs replaced"
            if not report.replaced:
                print(f"  {name:22} replaces no convolution of {settings.spec.label}")
                continue
        result = train_proxy(net, split, config)
        per_epoch = statistics.mean(result.seconds_per_epoch)
        baseline = baseline or per_epoch
        print(
            f"  {name or 'original':22} {per_epoch:6.2f} s/epoch ({per_epoch / baseline:.2f}x the original{replaced}), "
            f"accuracy after {epochs} epoch(s) {result.accuracy:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--resolution", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reps", type=int, default=20, help="forward + backward runs per module")
    parser.add_argument("--skip", default="", help="comma-separated: modules, training")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    torch.set_num_threads(args.threads)
    settings = EvalSettings(backbone="resnet18", width=args.width, resolution=args.resolution)
    if "modules" not in skip:
        modules(args.reps)
    if "training" not in skip:
        training(settings, args.epochs)


if __name__ == "__main__":
    main()
