"""Job handlers of the accuracy side: kinds "fisher", "train", "test" and "e2e".

Each is handler(payload, ctx) -> its kind's result (core.train.results), run by a worker
process, with the payload of its kind (core.train.payloads). "train" keeps the accuracy per
epoch so far as its partial result while it trains (the window draws it). Every result
carries the store's score of the operator under "score"; everything else stays with the job.
"""

from __future__ import annotations

from pathlib import Path

import torch

from core.data.assignment import Assignment, stand_in_from_document
from core.data.datasets import load_dataset
from core.ir.graph import OperatorGraph
from core.jobs.errors import JobCancelled
from core.store.score import Score

from .flops import flops_match
from .payloads import E2EPayload, FisherPayload, HeldOutPayload, TrainPayload
from .proxy import train_proxy
from .results import E2EResult, FisherResult, HeldOutResult, TrainResult
from .screening import screen_for
from .seeds import train_over_seeds
from .settings import EvalSettings

THREADS = 1  # torch threads per worker: more oversubscribe the 2 shared cores (4-8x slower under load)


def _setup(p: FisherPayload | TrainPayload, ctx, shared: bool):
    """The candidate network (the operator in every layer it fits, or an assignment's operators
    in its layers) and its Fisher Potential against the original's (`shared`: the network is
    only scored, see FisherScreen.candidate)."""
    torch.set_num_threads(THREADS)
    settings = p.settings
    stand_in = _stand_in(p.operator, settings.backbone)
    ctx.progress(0.02, f"loading {settings.dataset}")
    screen = screen_for(settings)
    ctx.progress(0.05, f"building {settings.spec.label} with {stand_in.name or 'the operator'}")
    candidate, report = screen.candidate(stand_in, shared)
    ctx.progress(0.08, f"Fisher Potential over {len(report.replaced)} replaced layers")
    return screen, candidate, report, screen.score(candidate, report)


def _stand_in(document: dict, backbone: str) -> OperatorGraph | Assignment:
    """The job's operator, or its assignment (FormatError when it names another backbone's layers)."""
    stand_in = stand_in_from_document(document, source="the job's operator")
    if isinstance(stand_in, Assignment):
        stand_in.check_backbone(backbone)
    return stand_in


def _score(settings: EvalSettings, **fields) -> Score:
    return Score(settings.dataset_label, settings.spec.label, **fields)


def fisher_job(payload: dict, ctx) -> FisherResult:
    """Fisher Potential of the candidate vs the original network, at initialisation."""
    p = FisherPayload.from_dict(payload)
    _, _, report, fisher = _setup(p, ctx, shared=True)
    return FisherResult(
        score=_score(p.settings, epochs=0, fisher_potential=fisher["fisher_potential"]),
        **fisher,
        replacement=report.record(),
    )


def train_job(payload: dict, ctx) -> TrainResult:
    """Fisher Potential at initialisation, then proxy training with Canvas's early stop."""
    p = TrainPayload.from_dict(payload)
    config = p.training
    screen, candidate, report, fisher = _setup(p, ctx, shared=False)
    trained = train_proxy(
        candidate,
        screen.split,
        config,
        list(p.best_curve) if p.best_curve else None,
        lambda fraction, message: ctx.progress(0.1 + 0.9 * fraction, message),
        lambda curve: ctx.partial({"accuracy_per_epoch": curve, "epochs_planned": config.epochs}),
    )
    curve = tuple(trained.accuracy_per_epoch)
    return TrainResult(
        score=_score(
            p.settings,
            epochs=len(curve),
            accuracy=trained.accuracy,
            accuracy_per_epoch=curve,
            fisher_potential=fisher["fisher_potential"],
        ),
        **fisher,
        replacement=report.record(),
        accuracy_per_epoch=curve,
        seconds_per_epoch=tuple(trained.seconds_per_epoch),
        reason=trained.reason,
        outcome=trained.outcome,
        epochs_planned=config.epochs,
        classes=screen.num_classes,
    )


def held_out_job(payload: dict, ctx) -> HeldOutResult:
    """The network trained again with each seed and tested on the test split, and, paired, the
    original's accuracies with the same seeds (trained here unless the payload has them)."""
    torch.set_num_threads(THREADS)
    p = HeldOutPayload.from_dict(payload)
    stand_in = None if p.operator is None else _stand_in(p.operator, p.settings.backbone)
    both = p.pair and p.original is None
    share = 0.5 if both else 1.0
    data = load_dataset(p.settings.dataset, p.settings.resolution)
    runs = train_over_seeds(
        stand_in,
        p.settings,
        p.training,
        p.seeds,
        lambda fraction, message: ctx.progress(share * fraction, message),
        data,
    )
    original = list(p.original) if p.original is not None else None
    if both:
        base = train_over_seeds(
            None,
            p.settings,
            p.training,
            p.seeds,
            lambda fraction, message: ctx.progress(0.5 + 0.5 * fraction, f"the original, {message}"),
            data,
        )
        original = [r.accuracy for r in base]
    return HeldOutResult.of(
        runs,
        original if p.pair else None,
        p.margin,
        p.training.epochs,
        p.settings.dataset_label,
        p.settings.spec.label,
        flops_match(p.settings.spec, data.num_classes, stand_in),
    )


def e2e_job(payload: dict, ctx) -> E2EResult:
    """Inference latency (batch 1) of the whole network with the operator (or the backbone
    narrowed by the deployment's width multiplier) against the original, both with tuned kernels,
    at the payload's deployment size (backbone, width, resolution, trials per kernel, transfer,
    sources, ...), PyTorch's eager times of both, and both networks' FLOPs."""
    from core.compile.transfer_sources import payload_sources  # TVM: worker only
    from core.compile.tune import tuning_root
    from core.networks.end_to_end import tuned_end_to_end

    p = E2EPayload.from_dict(payload)
    settings, deploy = p.settings, p.deploy
    stand_in = None if p.operator is None else _stand_in(p.operator, deploy.backbone)
    root = Path(p.tuning_root).expanduser() if p.tuning_root else tuning_root()

    def check_cancelled() -> None:
        if ctx.cancelled():
            what = "the narrowed network" if stand_in is None else stand_in.name or "the operator"
            raise JobCancelled(f"timing {what} in {deploy.label} was cancelled")

    run = tuned_end_to_end(
        stand_in, deploy, payload_sources(list(deploy.sources) or None, root), root, ctx.progress, check_cancelled
    )
    flops = flops_match(deploy.spec, deploy.num_classes, stand_in)
    return E2EResult.of(run, settings.dataset_label, settings.spec.label, flops)
