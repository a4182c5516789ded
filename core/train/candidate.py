"""An operator placed in a backbone, next to the original network it is judged against.

Original and candidate networks start from the same seed, so every layer the operator did
not replace has the same initial weights in both, and Fisher Potential compares like with like.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from core.analysis.fisher import fisher_potential, passes_fisher
from core.data.backbones import build_backbone
from core.data.datasets import Split, load_dataset, split_dataset
from core.data.replace import ReplacementReport, replace_convs
from core.ir.graph import OperatorGraph

from .errors import EvaluationError
from .settings import EvalSettings


def load_split(settings: EvalSettings) -> Split:
    data = load_dataset(settings.dataset, settings.resolution)
    return split_dataset(data, settings.val_fraction, settings.seed, settings.limit)


def networks(
    graph: OperatorGraph, settings: EvalSettings, num_classes: int
) -> tuple[nn.Module, nn.Module, ReplacementReport]:
    """(original, candidate, report); EvaluationError if the operator replaced no layer."""
    original = build_backbone(settings.spec, num_classes, settings.seed)
    candidate = build_backbone(settings.spec, num_classes, settings.seed)
    report = replace_convs(candidate, graph, settings.resolution)
    if not report.replaced:
        reasons = sorted({o.detail for o in report.layers})
        raise EvaluationError(
            f"operator {report.operator} fits none of the {len(report.layers)} "
            f"convolutions of {settings.spec.label}: {'; '.join(reasons)}"
        )
    return original, candidate, report


def fisher_batch(split: Split, size: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One seeded random minibatch of real training examples."""
    index = np.random.default_rng(seed).choice(len(split.train), min(size, len(split.train)), replace=False)
    return torch.from_numpy(split.train.images[index]), torch.from_numpy(split.train.labels[index])


def screen(
    original: nn.Module, candidate: nn.Module, report: ReplacementReport, split: Split, settings: EvalSettings
) -> dict:
    """Fisher Potential of the candidate and of the original over the replaced layers, and the verdict."""
    images, labels = fisher_batch(split, settings.fisher_batch, settings.seed)
    ours = fisher_potential(candidate, report.replaced, images, labels)
    theirs = fisher_potential(original, report.replaced, images, labels)
    return {
        "fisher_potential": ours.total,
        "fisher_original": theirs.total,
        "fisher_passes": passes_fisher(ours.total, theirs.total),
        "fisher_layers": ours.layers,
        "fisher_layers_original": theirs.layers,
    }
