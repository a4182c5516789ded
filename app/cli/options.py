"""Options that several commands take, written once: the results store, the sizes to bind,
machine-readable output, the device, where transfer-tuning takes schedules from, the proxy
task an operator is scored on, and how kernels are tuned and timed. A command passes its
own help where the option means something narrower there."""

from __future__ import annotations

from core.search.strategies import STRATEGIES

STORE_HELP = "results store file (default: $TESSERA_STORE or ~/.local/share/tessera/results.db)"
BIND_HELP = "values such as C_in=64,H=56 (default: the file's own)"
FROM_HELP = "a tuning folder or results store to take schedules from (repeatable; default: the tuning folder)"


def store(p, help: str = STORE_HELP) -> None:
    p.add_argument("--store", metavar="PATH", help=help)


def bind(p, help: str = BIND_HELP) -> None:
    p.add_argument("--bind", default="", help=help)


def json_output(p, help: str = "machine-readable output") -> None:
    p.add_argument("--json", action="store_true", help=help)


def device(p, help: str) -> None:
    p.add_argument("--device", metavar="NAME", help=help)


def tune_trials(p, help: str, default: int | None = 0) -> None:
    p.add_argument("--tune-trials", type=int, default=default, metavar="N", help=help)


def transfer_sources(p, help: str = FROM_HELP) -> None:
    """--from, read by app.cli.inputs.transfer_sources."""
    p.add_argument("--from", dest="sources", action="append", default=[], metavar="STORE_OR_DIR", help=help)


def transfer(p, transfer_help: str, from_help: str = FROM_HELP) -> None:
    """--transfer, --from and --top-k: tune by reusing schedules of the same kernel class."""
    p.add_argument("--transfer", action="store_true", help=transfer_help)
    transfer_sources(p, f"with --transfer: {from_help}")
    p.add_argument(
        "--top-k",
        type=int,
        default=1,
        metavar="K",
        help="with --transfer: schedules tried per tuned kernel, fastest first (default 1)",
    )


def tuning_dir(p, help: str = "tuning databases folder (default ~/.cache/tessera/tuning)") -> None:
    p.add_argument("--tuning-dir", metavar="DIR", help=help)


def timing(p) -> None:
    """How kernels are tuned and timed, for `tessera measure` and `tessera tune`."""
    p.add_argument(
        "--cost-model", choices=("xgb", "random"), default="xgb", help="MetaSchedule's cost model (default xgb)"
    )
    tuning_dir(p)
    p.add_argument(
        "--repeat",
        type=int,
        default=10,
        help="timed repeats of the kernel kept (median and spread over them; default 10)",
    )
    p.add_argument("--min-repeat-ms", type=float, default=100.0, help="minimum length of one repeat (default 100)")


def proxy_task(p, *, backbone: str | None = "resnet18", purpose: str = "", backbone_help: str = "") -> None:
    """--backbone, --dataset, --width and --resolution: the network and data an operator is
    scored in (`purpose` names the option that scores, e.g. --fisher). Imported here, when a
    command adds them, so that commands without them (`tessera gui`) start without numpy."""
    from core.data.datasets import DEFAULT_DATASET, DEFAULT_RESOLUTION, SOURCES
    from core.data.specs import BACKBONE_NAMES

    what = f" for {purpose}" if purpose else ""
    p.add_argument(
        "--backbone",
        default=backbone,
        choices=BACKBONE_NAMES,
        help=backbone_help or f"backbone{what} (default %(default)s)",
    )
    p.add_argument("--dataset", default=DEFAULT_DATASET, help=f"dataset{what}: {SOURCES} (default %(default)s)")
    p.add_argument("--width", type=int, default=16, help=f"channels of the first stage{what} (default 16)")
    p.add_argument(
        "--resolution", type=int, default=DEFAULT_RESOLUTION, help=f"input side in pixels{what} (default %(default)s)"
    )


def fisher_batch(p) -> None:
    from core.train.settings import EvalSettings

    p.add_argument(
        "--fisher-batch",
        type=int,
        default=EvalSettings.fisher_batch,
        metavar="N",
        help="examples in the Fisher Potential minibatch (default %(default)s)",
    )


def search_space(p, strategy: str) -> None:
    """The strategy (core.search.strategies, `strategy` the default), the operator a search
    replaces and the limits on what it proposes (`search`, `discover`)."""
    p.add_argument(
        "--strategy",
        choices=tuple(STRATEGIES),
        default=strategy,
        help="; ".join(f"{e.key}: {e.label}" for e in STRATEGIES.values()) + " (default %(default)s)",
    )
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
