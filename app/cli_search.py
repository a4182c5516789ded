"""`tessera search`: let a strategy propose operators into the store."""

from __future__ import annotations

import sys
from pathlib import Path

from core.data.datasets import DEFAULT_DATASET, DEFAULT_RESOLUTION, SOURCES

EXAMPLES = Path(__file__).resolve().parents[1] / "resources" / "examples"


def add_parsers(sub) -> None:
    p = sub.add_parser("search", help="propose operators (random sampling, MCTS, transformation sequences)")
    p.add_argument("--strategy", choices=("random", "mcts", "sequences"), default="random")
    p.add_argument(
        "--template",
        default="conv2d",
        help="operator to replace: an example name (conv2d) or a JSON file (default conv2d)",
    )
    p.add_argument(
        "--budget-flops", type=float, default=1.0, metavar="R", help="FLOPs cap relative to the template (default 1.0)"
    )
    p.add_argument(
        "--budget-params",
        type=float,
        default=None,
        metavar="R",
        help="parameter cap relative to the template (default none)",
    )
    p.add_argument("--max-primitives", type=int, default=8)
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--samples", type=int, metavar="N", help="stop after N candidates (default 20)")
    limit.add_argument("--minutes", type=float, metavar="M", help="stop after M minutes")
    p.add_argument(
        "--evaluate",
        choices=("none", "fisher", "train"),
        default="none",
        help="score each candidate: nothing, Fisher Potential, or proxy training",
    )
    p.add_argument(
        "--tune-trials",
        type=int,
        default=None,
        metavar="N",
        help="queue a measurement job per candidate with N tuning trials (0: untuned)",
    )
    p.add_argument("--bind", default="", help="sizes for the measurement jobs, e.g. C_in=32,H=28")
    p.add_argument("--backbone", default="resnet18", help="backbone for --evaluate (default resnet18)")
    p.add_argument(
        "--dataset", default=DEFAULT_DATASET, help=f"dataset for --evaluate: {SOURCES} (default %(default)s)"
    )
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--resolution", type=int, default=DEFAULT_RESOLUTION)
    p.add_argument("--epochs", type=int, default=2, help="proxy-training epochs for --evaluate train")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--store", metavar="PATH", help="results store (default $TESSERA_STORE or ~/.local/share/tessera/results.db)"
    )
    p.set_defaults(func=cmd_search)


def template_path(name: str) -> Path:
    path = Path(name)
    if path.suffix == ".json" or path.exists():
        return path
    return EXAMPLES / f"{name}.json"


def cmd_search(args) -> int:
    from core.ir.bindings import parse_bindings
    from core.ir.serialize import read_document
    from core.jobs.isolate import call_in_subprocess
    from core.search.driver import SearchConfig
    from core.search.results import SearchResult
    from core.store import Store

    evaluation = {
        "backbone": args.backbone,
        "dataset": args.dataset,
        "width": args.width,
        "resolution": args.resolution,
        "seed": args.seed,
    }
    if args.evaluate == "train":
        evaluation["epochs"] = args.epochs
    config = {
        "template": read_document(template_path(args.template)),
        "strategy": args.strategy,
        "budget_flops": args.budget_flops,
        "budget_params": args.budget_params,
        "max_primitives": args.max_primitives,
        "seed": args.seed,
        "samples": args.samples if args.samples is not None or args.minutes is not None else 20,
        "minutes": args.minutes,
        "evaluate": args.evaluate,
        "tune_trials": args.tune_trials,
        "measure_bindings": parse_bindings(args.bind),
        "evaluation": evaluation,
    }
    SearchConfig.from_dict(config)  # clear errors before a process is spawned
    with Store(args.store) as store:
        path = str(store.path)
    print(f"searching with {args.strategy} for {args.template}; results go to {path}")

    def show(fraction: float, message: str) -> None:
        print(f"  [{fraction:4.0%}] {message}", flush=True)

    summary = SearchResult.from_dict(
        call_in_subprocess("core.search.driver:run_search", {"config": config, "store_path": path}, on_progress=show)
    )
    stats = ", ".join(f"{k} {v}" for k, v in summary.stats.items())
    print(
        f"found {summary.found} candidates in {summary.seconds} s "
        f"({summary.scored} scored, {summary.queued} measurement jobs queued); {stats}"
    )
    for failure in summary.failures:
        print(f"  not scored: {failure}", file=sys.stderr)
    if summary.queued:
        print("run `tessera worker` to measure the queued candidates")
    return 0
