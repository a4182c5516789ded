"""`tessera search`: let a strategy propose operators into the store."""

from __future__ import annotations

import sys

from core.search.strategies import EVALUATIONS

from . import options
from .inputs import template_path


def add_parsers(sub) -> None:
    p = sub.add_parser("search", help="propose operators (Canvas sampler, MCTS, transformation sequences)")
    options.search_space(p, "canvas")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--samples", type=int, metavar="N", help="stop after N candidates (default 20)")
    limit.add_argument("--minutes", type=float, metavar="M", help="stop after M minutes")
    p.add_argument(
        "--evaluate",
        choices=tuple(EVALUATIONS),
        default="none",
        help="score each candidate: " + "; ".join(f"{k}: {label}" for k, label in EVALUATIONS.items()),
    )
    options.tune_trials(p, "queue a measurement job per candidate with N tuning trials (0: untuned)", default=None)
    options.bind(p, "sizes for the measurement jobs, e.g. C_in=32,H=28")
    options.proxy_task(p, purpose="--evaluate")
    p.add_argument("--epochs", type=int, default=2, help="proxy-training epochs for --evaluate train")
    p.add_argument("--seed", type=int, default=0)
    options.store(p)
    p.set_defaults(func=cmd_search)


def cmd_search(args) -> int:
    from core.ir.bindings import parse_bindings
    from core.ir.serialize import read_document
    from core.jobs.isolate import call_in_subprocess
    from core.search.results import SearchResult
    from core.search.settings import SearchConfig
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
    config = SearchConfig(  # checked: clear errors before a process is spawned
        template=read_document(template_path(args.template)),
        strategy=args.strategy,
        budget_flops=args.budget_flops,
        budget_params=args.budget_params,
        max_primitives=args.max_primitives,
        seed=args.seed,
        samples=args.samples if args.samples is not None or args.minutes is not None else 20,
        minutes=args.minutes,
        evaluate=args.evaluate,
        tune_trials=args.tune_trials,
        measure_bindings=parse_bindings(args.bind),
        evaluation=evaluation,
    )
    with Store(args.store) as store:
        path = str(store.path)
    print(f"searching with {args.strategy} for {args.template}; results go to {path}")

    def show(fraction: float, message: str) -> None:
        print(f"  [{fraction:4.0%}] {message}", flush=True)

    summary = SearchResult.from_dict(
        call_in_subprocess(
            "core.search.driver:run_search", {"config": config.to_dict(), "store_path": path}, on_progress=show
        )
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
