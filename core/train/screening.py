"""Fisher Potential screening of many candidates under one setting (NAS-PTE's filter).

Screening is the loop's cheapest stage and runs for every candidate, so everything that does
not depend on the candidate is done once per setting and process: the data split, the
seeded minibatch, the input size of every convolution and the original network's score of
every convolution (a layer's score depends only on its own activations and gradients, so
the original's score over any set of replaced layers is a sum of these). A candidate then
costs the operator's layers and one forward and backward pass: a candidate only scored
shares the original network's other layers (no network is built or initialised anew), one
to be trained is built from the original's seed. Either way every layer the operator did not
replace has the original's initial weights, and the operator's layers draw theirs from the
same random state, so the scores compare like with like and do not depend on which way the
network was made. Imports torch: worker processes and benchmarks only.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import torch
from torch import nn

from core.analysis.fisher import fisher_potential, passes_fisher
from core.data.assignment import Assignment
from core.data.backbones import build_backbone
from core.data.datasets import ImageDataset, Split, load_dataset, split_dataset
from core.data.swap_convs import InputSizes, ReplacementReport, conv_input_sizes, replace_convs
from core.ir.graph import OperatorGraph

from .errors import EvaluationError
from .settings import EvalSettings


def load_split(settings: EvalSettings, data: ImageDataset | None = None) -> Split:
    """The settings' split of their dataset (`data`: that dataset, already loaded)."""
    data = data if data is not None else load_dataset(settings.dataset, settings.resolution)
    return split_dataset(data, settings.val_fraction, settings.seed, settings.limit, settings.test_fraction)


def candidate_network(
    settings: EvalSettings,
    num_classes: int,
    stand_in: OperatorGraph | Assignment,
    sizes: InputSizes | None = None,
) -> tuple[nn.Module, ReplacementReport]:
    """The settings' backbone, seeded with their seed, with the operator in every layer it fits
    (or an assignment's operators in the layers it names); EvaluationError if it replaces none."""
    net = build_backbone(settings.spec, num_classes, settings.seed)
    return net, _replaced(net, stand_in, settings, sizes)


def _replaced(
    net: nn.Module,
    stand_in: OperatorGraph | Assignment,
    settings: EvalSettings,
    sizes: InputSizes | None,
) -> ReplacementReport:
    report = replace_convs(net, stand_in, settings.resolution, sizes=sizes, kinds=settings.spec.replace)
    if not report.replaced:
        reasons = sorted({o.detail for o in report.layers})
        raise EvaluationError(
            f"operator {report.operator} fits none of the {len(report.layers)} "
            f"convolutions of {settings.spec.label}: {'; '.join(reasons)}"
        )
    return report


def fisher_batch(split: Split, size: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One seeded random minibatch of real training examples."""
    index = np.random.default_rng(seed).choice(len(split.train), min(size, len(split.train)), replace=False)
    return torch.from_numpy(split.train.images[index]), torch.from_numpy(split.train.labels[index])


class FisherScreen:
    """The data, the minibatch and the original network's per-layer scores for one setting."""

    def __init__(self, settings: EvalSettings):
        self.settings = settings
        self.split = load_split(settings)
        self.num_classes = self.split.train.num_classes
        self.images, self.labels = fisher_batch(self.split, settings.fisher_batch, settings.seed)
        original = build_backbone(settings.spec, self.num_classes, settings.seed)
        self._network, self._draws = original, torch.get_rng_state()
        self.sizes = conv_input_sizes(original, settings.resolution)
        convs = [name for name, m in original.named_modules() if isinstance(m, nn.Conv2d) and name in self.sizes]
        self.original = fisher_potential(original, convs, self.images, self.labels).layers

    def candidate(
        self, stand_in: OperatorGraph | Assignment, shared: bool = False
    ) -> tuple[nn.Module, ReplacementReport]:
        """The backbone with the operator in every layer it fits, or an assignment's operators
        in the layers it names (seeded as the original); EvaluationError if it replaces none.
        With `shared`, the layers it does not replace are the screen's original network's own
        modules, neither copied nor drawn anew: a network to score, never to train (see
        sharing_copy)."""
        if not shared:
            return candidate_network(self.settings, self.num_classes, stand_in, self.sizes)
        net = sharing_copy(self._network)
        torch.set_rng_state(self._draws)  # the operator's layers draw as after build_backbone
        return net, _replaced(net, stand_in, self.settings, self.sizes)

    def score(self, net: nn.Module, report: ReplacementReport) -> dict:
        """Fisher Potential of the candidate and of the original over the replaced layers, and
        the verdict (FisherError when the candidate has no meaningful score)."""
        ours = fisher_potential(net, report.replaced, self.images, self.labels)
        theirs = {name: self.original[name] for name in report.replaced}
        total = sum(theirs.values())
        return {
            "fisher_potential": ours.total,
            "fisher_original": total,
            "fisher_passes": passes_fisher(ours.total, total),
            "fisher_layers": ours.layers,
            "fisher_layers_original": theirs,
        }


def sharing_copy(module: nn.Module) -> nn.Module:
    """New containers over `module`'s own leaf modules (convs, batch norms, ...): a layer set
    into the copy leaves `module` as it was, and building it copies no weight. Scoring changes
    no weight, and batch norm in training mode normalises by the minibatch, so running it
    leaves the shared layers computing as before (only their unused running statistics move)."""
    if not module._modules:
        return module
    shell = object.__new__(type(module))
    vars(shell).update({k: v.copy() if isinstance(v, (dict, set)) else v for k, v in vars(module).items()})
    shell._modules = {k: m if m is None else sharing_copy(m) for k, m in module._modules.items()}
    return shell


def screen_for(settings: EvalSettings) -> FisherScreen:
    """The process's screen for `settings`, made once (a changed dataset file makes a new one)."""
    path = Path(settings.dataset)
    stamp = path.stat().st_mtime_ns if path.exists() else None
    return _screen(settings, stamp)


@functools.lru_cache(maxsize=1)  # a user's dataset can take a good part of the memory
def _screen(settings: EvalSettings, stamp: int | None) -> FisherScreen:
    return FisherScreen(settings)
