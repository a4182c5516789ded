"""Options that several commands take, written once: the results store, the sizes to bind,
machine-readable output, the device, where transfer-tuning takes schedules from, the proxy
task an operator is scored on, and how kernels are tuned and timed. A command passes its
own help where the option means something narrower there."""

from __future__ import annotations

import argparse

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


def proxy_task(
    p, *, backbone: str | None = "resnet18", purpose: str = "", backbone_help: str = "", deployed: bool = False
) -> None:
    """--backbone, --dataset, --train-width (or --width) and --resolution: the network and data an
    operator is scored in (`purpose` names the option that scores, e.g. --fisher; `deployed`: the
    command also times networks, so --train-width may say 'deploy', read by train_width). Imported
    here, when a command adds them, so that commands without them (`tessera gui`) start without numpy."""
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
    deploy = (
        "; 'deploy': the width the networks are timed at (--deploy-width, else the backbone's standard width, "
        "64 for ResNet-18), so accuracy is measured on the network that is deployed"
        if deployed
        else ""
    )
    p.add_argument(
        "--train-width",
        "--width",
        dest="width",
        type=_train_width if deployed else int,
        default=16,
        metavar="N",
        help=f"channels of the first stage of the network trained{what} (default %(default)s, the proxy width{deploy})",
    )
    p.add_argument(
        "--resolution", type=int, default=DEFAULT_RESOLUTION, help=f"input side in pixels{what} (default %(default)s)"
    )


def _train_width(text: str) -> int | str:
    """A whole number of channels (EvalSettings checks it is >= 1) or 'deploy'."""
    if text == "deploy":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number of channels or 'deploy', got {text!r}") from None


def train_width(args, backbone: str) -> int:
    """--train-width's channels: 'deploy' is the width the networks are timed at."""
    if args.width != "deploy":
        return args.width
    from core.networks.settings import STANDARD_WIDTH

    return args.deploy_width or STANDARD_WIDTH[backbone]


def training(p) -> None:
    """--train-device and --amp: where the accuracy side trains (core.train.device)."""
    from core.train.settings import TRAIN_DEVICES, TrainConfig

    p.add_argument(
        "--train-device",
        choices=TRAIN_DEVICES,
        default=TrainConfig.device,
        help="where training runs: auto takes a CUDA GPU when torch sees one (a local worker on a machine with "
        "one, a Ray task the cluster gave one), else the CPU; cuda fails clearly where there is none "
        "(default %(default)s)",
    )
    p.add_argument(
        "--amp", action="store_true", help="train with mixed precision (float16, gradient scaling); CUDA only"
    )


def report(p, sequential: bool = False) -> None:
    """--seeds and --margin: a network's reported accuracy (core.train.seeds, core.train.paired);
    with `sequential`, no --seeds means seeds added until the verdict decides (core.train.sequential)."""
    from core.train.paired import MARGIN, SEEDS
    from core.train.sequential import DEFAULT_RULE

    rule = DEFAULT_RULE
    p.add_argument(
        "--seeds",
        type=int,
        default=None if sequential else SEEDS,
        metavar="N",
        help="report test accuracy over N seeds (those after --seed): the network and the original trained "
        "again with each, tested on the test split, shown as mean +- std and a paired difference with its 95%% "
        "interval; 0: no report "
        + (
            f"(default: {rule.first} seeds, then {rule.step} more at a time up to {rule.cap} until the interval "
            "decides; with N, the smallest difference the run could detect is printed too)"
            if sequential
            else "(default %(default)s)"
        ),
    )
    p.add_argument(
        "--margin",
        type=float,
        default=MARGIN,
        metavar="F",
        help="accuracy below the original's still within the margin, as a fraction (default %(default)s: 1 point); "
        "a reported accuracy is within it when its paired 95%% interval lies above -F",
    )


def replace(p) -> None:
    """--replace: the kinds of convolution an operator stands in for (core.data.specs)."""
    from core.data.specs import DEFAULT_REPLACE

    p.add_argument(
        "--replace",
        default=",".join(DEFAULT_REPLACE),
        metavar="KINDS",
        help="the convolutions an operator stands in for, comma-separated: standard (KxK, stride 1), pointwise "
        "(1x1: its window K bound to 1), strided (stride 2: every other input row and column, then the "
        "operator) (default %(default)s)",
    )


def deployment(p, trials_help: str) -> None:
    """--deploy-width, --deploy-resolution and --trials: the network size kernels are timed at,
    their defaults DeploySettings' (core.networks.settings, the one place they are set)."""
    from core.networks.settings import DeploySettings

    p.add_argument(
        "--deploy-width",
        type=int,
        default=None,
        metavar="N",
        help="channels of the first stage when timing (default: the backbone's standard width)",
    )
    p.add_argument(
        "--deploy-resolution",
        type=int,
        default=DeploySettings.resolution,
        metavar="PX",
        help="input side when timing (default %(default)s)",
    )
    p.add_argument("--trials", type=int, default=DeploySettings.trials, metavar="N", help=trials_help)


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
