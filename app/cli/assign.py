"""`tessera assign`: each layer of a backbone gets the cheapest candidate operator that keeps
its Fisher Potential (NAS-PTE's per-layer rule), cheapest by FLOPs or, with --pick latency, by
the latency TVM measures for each candidate at each layer's sizes in the deployment network
(tuned for --trials trials, in a worker process; a latency in doubt leaves its candidate out
there, saying why); the assignment file it writes is what
`tessera evaluate` then scores like one operator."""

from __future__ import annotations

from pathlib import Path

from core.data.assignment import save_assignment
from core.ir.errors import FormatError
from core.ir.serialize import read_operator
from core.networks.settings import DeploySettings

from . import options
from .evaluate import eval_settings, proxy_options


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "assign",
        help="assign each layer the cheapest operator keeping its Fisher Potential (NAS-PTE's per-layer rule)",
    )
    p.add_argument("files", nargs="+", metavar="OPERATOR", help="candidate operator files")
    p.add_argument("-o", "--out", required=True, metavar="PATH", help="the assignment file to write")
    p.add_argument("--force", action="store_true", help="overwrite PATH")
    proxy_options(p, "default resnet18")
    p.add_argument(
        "--pick",
        choices=("flops", "latency"),
        default="flops",
        help="cheapest by FLOPs, or by the latency TVM measures where two or more candidates pass (default flops)",
    )
    timed = p.add_argument_group("with --pick latency: where and how the candidates are timed")
    options.deployment(
        timed, "MetaSchedule trials per candidate and layer size (default %(default)s; 0: TVM's default)"
    )
    options.timing(timed)
    p.set_defaults(func=cmd_assign)


def cmd_assign(args) -> int:
    """Score every candidate once and write the per-layer assignment, a line per layer."""
    from core.train.per_layer import assign_per_layer  # torch: only this command
    from core.train.screening import screen_for

    out = Path(args.out)
    if out.exists() and not args.force:
        raise FormatError(f"{out} exists (--force overwrites it)")
    graphs = [read_operator(f)[1] for f in args.files]
    for graph, f in zip(graphs, args.files):
        graph.name = graph.name or Path(f).stem
    settings = eval_settings(args, "resnet18")
    timing, how = None, f"Fisher Potential on {settings.dataset_label}"
    if args.pick == "latency":
        from core.networks.layer_latency import LayerLatency
        from core.train.per_layer import layer_copies

        deploy = DeploySettings(
            backbone=settings.backbone,
            width=args.deploy_width,
            resolution=args.deploy_resolution,
            trials=args.trials,
            cost_model=args.cost_model,
            repeat=args.repeat,
            min_repeat_ms=args.min_repeat_ms,
            seed=args.seed,
        )
        timing = LayerLatency(deploy, layer_copies, args.tuning_dir, _progress)
        how += f", latency at {deploy.label} ({args.trials} trials per kernel)"
    assignment = assign_per_layer(graphs, screen_for(settings), name=out.stem, timing=timing)
    save_assignment(assignment, out)
    for line in assignment.lines():
        print(line)
    print(
        f"wrote {out}: {len(assignment.layers)} of {len(assignment.reasons)} convolutions of {settings.spec.label} assigned ({how})"
    )
    return 0


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] timing the candidates: {message}", flush=True)
