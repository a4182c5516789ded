"""`tessera discover`: the discovery loop (core.search.discovery) with a time budget: propose,
screen with Fisher Potential, train with early stop, keep what is within the accuracy margin,
test it over seeds (added until its verdict decides, up to --seed-cap), time it tuned against
the tuned original, beside its references (the original narrowed to its FLOPs,
depthwise-separable), and once the run has nothing else in flight, time every survivor and
reference again alone. Worker processes started here run the
stages; the counts print as they change; the report is core.search.report's, as the window
shows it; running the same command again resumes the run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.train.sequential import DEFAULT_RULE
from core.train.settings import FISHER_THRESHOLD, TrainConfig

from . import options
from .inputs import template_path, transfer_sources

if TYPE_CHECKING:
    from core.search.settings import DiscoveryConfig


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "discover",
        help="find operators faster than the template at equal accuracy: screen, train, tune, in a time budget",
    )
    options.search_space(p, "mcts")
    p.add_argument(
        "--minutes",
        type=float,
        default=60.0,
        metavar="M",
        help="time budget of this sitting (default 60; 0 finishes what a resumed run has in flight, proposing nothing)",
    )
    p.add_argument("--samples", type=int, default=None, metavar="N", help="stop after N candidates")
    p.add_argument("--workers", type=int, default=2, help="worker processes running the stages (default 2)")
    p.add_argument("--in-flight", type=int, default=None, metavar="N", help="candidates between stages at once")
    proxy = p.add_argument_group("the proxy task (accuracy)")
    options.proxy_task(proxy, deployed=True)
    proxy.add_argument("--epochs", type=int, default=TrainConfig.epochs, help="(default %(default)s)")
    options.training(proxy)
    proxy.add_argument("--theta", type=float, default=0.5, help="Canvas's early-stop theta")
    proxy.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="train and validate on a stratified sample of N examples (the test split stays whole)",
    )
    proxy.add_argument("--max-batches", type=int, default=None, metavar="N", help="batches per epoch at most")
    options.replace(proxy)
    judge = p.add_argument_group("the stages")
    judge.add_argument("--no-fisher", action="store_true", help="skip the Fisher Potential screen")
    judge.add_argument(
        "--fisher-threshold",
        type=float,
        default=FISHER_THRESHOLD,
        metavar="R",
        help="screen out below R x the original's Fisher Potential (default %(default)s)",
    )
    options.fisher_batch(judge)
    options.report(judge)
    judge.add_argument(
        "--seed-cap",
        type=int,
        default=DEFAULT_RULE.cap,
        metavar="N",
        help=f"test a candidate over --seeds seeds first, then {DEFAULT_RULE.step} more at a time up to N until its "
        "paired interval decides (within or worse), the error spent over the looks; the report says how many seeds "
        "each verdict took and why it stopped (default %(default)s; 0: exactly --seeds, one look at 95%%)",
    )
    judge.add_argument(
        "--no-references",
        action="store_true",
        help="hold survivors against nothing but the original (by default each is held against the original "
        "narrowed to its FLOPs and depthwise-separable, tested and tuned as it is)",
    )
    judge.add_argument(
        "--no-tune",
        action="store_true",
        help="stop at the margin; no end-to-end tuning (else survivors are tuned while others train, and timed "
        "again one at a time once the run has nothing else in flight: the figure reported is that one)",
    )
    judge.add_argument(
        "--flops-penalty",
        type=float,
        default=0.0,
        metavar="W",
        help="the search's latency term: each reward times 1 - W x the candidate's FLOPs over the original's "
        "(default 0: accuracy alone)",
    )
    deploy = p.add_argument_group("the deployment size (latency)")
    options.deployment(deploy, "MetaSchedule trials per network kernel not tuned yet (default %(default)s)")
    deploy.add_argument("--no-transfer", action="store_true")
    options.transfer_sources(deploy)
    options.tuning_dir(deploy)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--name", default="", help="a name for the run (shown in the window)")
    options.store(p)
    p.set_defaults(func=cmd_discover)


def config_of(args) -> DiscoveryConfig:
    """The run's settings from the options, checked."""
    from core.data.specs import DEFAULT_REPLACE, replace_kinds
    from core.ir.serialize import read_document
    from core.search.settings import DiscoveryConfig

    # the device, mixed precision and the replaced kinds are left out when the default, so that
    # earlier runs keep their key
    replace = replace_kinds(args.replace)
    return DiscoveryConfig.of(
        read_document(template_path(args.template)),
        args.backbone,
        args.seed,
        proxy={
            "dataset": args.dataset,
            "width": options.train_width(args, args.backbone),
            "resolution": args.resolution,
            "epochs": args.epochs,
            "device": None if args.train_device == TrainConfig.device else args.train_device,
            "amp": args.amp or None,
            "theta": args.theta,
            "limit": args.limit,
            "max_batches": args.max_batches,
            "fisher_batch": args.fisher_batch,
            "replace": None if replace == DEFAULT_REPLACE else list(replace),
        },
        deploy={
            "width": args.deploy_width,
            "resolution": args.deploy_resolution,
            "trials": args.trials,
            "transfer": not args.no_transfer,
            "sources": tuple(transfer_sources(args.sources, not args.no_transfer, "drop --no-transfer")),
            "replace": replace,
        },
        strategy=args.strategy,
        budget_flops=args.budget_flops,
        budget_params=args.budget_params,
        max_primitives=args.max_primitives,
        minutes=args.minutes,
        samples=args.samples,
        in_flight=args.in_flight or args.workers,
        fisher=not args.no_fisher,
        fisher_threshold=args.fisher_threshold,
        flops_penalty=args.flops_penalty,
        margin=args.margin,
        test_seeds=args.seeds,
        seed_cap=args.seed_cap,
        references=not args.no_references,
        tune=not args.no_tune,
        tuning_root=args.tuning_dir,
        name=args.name,
    )


def cmd_discover(args) -> int:
    from core.data.dataset_check import check_source
    from core.jobs.supervisor import Supervisor
    from core.search.discovery import run_discovery
    from core.search.report import ended_text, report
    from core.store import Store
    from core.train.device import training_device

    config = config_of(args)  # checked: clear errors before any process starts
    check_source(args.dataset)  # DatasetError names a missing file or folder
    training_device(args.train_device, args.amp)  # the workers are this machine's
    with Store(args.store) as store:
        path = str(store.path)
    print(
        f"discovering with {args.strategy} for {args.template} for {args.minutes:g} minutes (counted once the "
        f"original network is trained and tested); results in {path}"
    )
    supervisor = Supervisor(path, workers=args.workers)
    supervisor.start()
    shown = [""]

    def tick() -> None:
        for line in supervisor.poll():
            print(f"  {line}", flush=True)

    def show(fraction: float, message: str) -> None:
        if message != shown[0]:
            shown[0] = message
            print(f"[{fraction:4.0%}] {message}", flush=True)

    try:
        summary = run_discovery(config, path, show, tick=tick)
    finally:
        for line in supervisor.stop():
            print(f"  {line}")
    print(f"run {summary.run} ({summary.name}): {ended_text(summary)}")
    for line in report(summary).lines():
        print(f"  {line}")  # with no best survivor, its best line says so
    return 0
