"""`tessera demo`: the headless tour `make run` gives without a display.

It runs the real subcommands one after another, in a throw-away store unless
one is given, so what it prints is what a user would see typing them."""

from __future__ import annotations

import tempfile
from pathlib import Path

from core.search.strategies import STRATEGIES

from . import options
from .inputs import EXAMPLES

SMALL = "C_in=32,C_out=32,H=28,W=28,K=3"


def add_parsers(sub) -> None:
    p = sub.add_parser("demo", help="headless tour: validate, inspect, measure, search, plot (a few minutes)")
    options.store(p, "results store to fill (default: a temporary one)")
    p.add_argument("--samples", type=int, default=6, help="candidates per search strategy (default 6)")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args) -> int:
    from app.cli import main

    with tempfile.TemporaryDirectory(prefix="tessera-demo-") as tmp:
        store = args.store or str(Path(tmp) / "demo.db")
        conv = str(EXAMPLES / "conv2d.json")
        search = ["--samples", str(args.samples), "--tune-trials", "0", "--bind", SMALL, "--store", store]
        steps = [
            ("Validate every example operator", ["validate", *sorted(str(p) for p in EXAMPLES.glob("*.json"))]),
            ("Shapes, FLOPs and parameters of conv2d", ["info", conv, "--bind", SMALL]),
            ("Compile conv2d with TVM, check it against PyTorch, time both", ["measure", conv, "--bind", SMALL]),
            *(
                (
                    f"{STRATEGIES[key].label} into the store, measurements queued",
                    ["search", "--strategy", key, *search],
                )
                for key in ("canvas", "mcts")
            ),
            ("Workers measure the queued candidates", ["worker", "--store", store]),
            (
                "The Pareto front of latency against FLOPs",
                ["results", "--pareto", "latency_ms,flops", "--store", store],
            ),
        ]
        for number, (title, argv) in enumerate(steps, 1):
            print(f"\n=== {number}/{len(steps)} {title}\n$ tessera {' '.join(argv)}", flush=True)
            code = main(argv)
            if code:
                print(f"demo stopped: step {number} exited with {code}")
                return code
        print("\nDone. With a display, `make run` opens the window; `tessera gui FILE` too.")
    return 0
