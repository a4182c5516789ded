"""Where training runs: the one place that turns TrainConfig's `device` and `amp` into a torch
device, for local workers and Ray tasks alike. "auto" takes CUDA whenever torch sees a GPU: a
worker on a machine with one, or a Ray task the cluster gave one (Ray hides the GPUs from
tasks it gave none). Imports torch: worker processes only."""

from __future__ import annotations

import torch

from .errors import EvaluationError


def training_device(device: str = "auto", amp: bool = False) -> torch.device:
    """The device `device` ('auto', 'cpu' or 'cuda', checked by TrainConfig) names on this
    machine; EvaluationError when CUDA is asked for, or mixed precision, and there is no GPU."""
    cuda = torch.cuda.is_available()
    if device == "cuda" and not cuda:
        raise EvaluationError(
            "training on CUDA was asked for (--train-device cuda), but torch sees no CUDA GPU here "
            f"(torch {torch.__version__}, CUDA build {torch.version.cuda or 'none'}); use --train-device auto or cpu"
        )
    chosen = torch.device("cuda" if device == "cuda" or (device == "auto" and cuda) else "cpu")
    if amp and chosen.type != "cuda":
        raise EvaluationError(
            f"mixed precision (--amp) needs a CUDA GPU, but training runs on the CPU here "
            f"(--train-device {device}); drop --amp"
        )
    return chosen
