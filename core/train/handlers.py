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
from core.jobs.errors import ExecutorError, JobCancelled
from core.store.score import Score

from .flops import flops_match
from .payloads import E2EPayload, FisherPayload, HeldOutPayload, TrainPayload
from .proxy import train_proxy
from .results import E2EResult, FisherResult, HeldOutResult, SeedRun, TrainResult
from .screening import screen_for
from .seeds import originals_known, train_over_seeds
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
    original's accuracies with the same seeds: the payload's, else those an earlier test job in
    the store found on the same task (the original's trainings are shared by seed, looked up
    again before each seed's trainings so a job that finished meanwhile counts), else trained
    here. With a seed rule, seeds are added a look at a time until it decides."""
    torch.set_num_threads(THREADS)
    p = HeldOutPayload.from_dict(payload)
    stand_in = None if p.operator is None else _stand_in(p.operator, p.settings.backbone)
    data = load_dataset(p.settings.dataset, p.settings.resolution)
    flops = flops_match(p.settings.spec, data.num_classes, stand_in)
    original = _Original(p, _store(ctx), data)
    runs: list[SeedRun] = []
    accuracies: list[float | None] = []
    wanted = p.rule.first if p.rule else len(p.seeds)
    while True:
        for seed in p.seeds[len(runs) : wanted]:
            done = len(runs)
            share = 0.5 if p.pair and not original.known(seed) else 1.0  # of this seed's progress
            runs += train_over_seeds(stand_in, p.settings, p.training, [seed], _part(ctx, done, share, p.seeds), data)
            if p.pair:
                accuracies.append(original.accuracy(seed, _part(ctx, done + share, share, p.seeds, "the original, ")))
        result = HeldOutResult.of(
            runs,
            accuracies if p.pair else None,
            p.margin,
            p.training.epochs,
            p.settings.dataset_label,
            p.settings.spec.label,
            flops,
            p.rule,
        )
        decision = result.decision
        if decision is None or decision.finished or len(runs) == len(p.seeds):
            return result
        wanted = len(runs) + decision.next_seeds - decision.seeds  # seeds that diverged do not count


class _Original:
    """A test job's original network, seed by seed: the payload's accuracies, else the store's
    (core.train.seeds.originals_known, read by known() once for each seed not yet had), else
    trained here, under the original's own settings."""

    def __init__(self, p: HeldOutPayload, store, data):
        self.p, self.store = p, store
        self.settings = p.original_settings or p.settings
        same_data = (self.settings.dataset, self.settings.resolution) == (p.settings.dataset, p.settings.resolution)
        self.data = data if same_data else None
        self.accuracies: dict[int, float | None] = dict(zip(p.seeds, p.original or ()))

    def known(self, seed: int) -> bool:
        if seed not in self.accuracies and self.p.pair:
            found = originals_known(self.store, self.settings, self.p.training, self.p.original_operator)
            self.accuracies = {**found, **self.accuracies}
        return seed in self.accuracies

    def accuracy(self, seed: int, progress) -> float | None:
        """The seed's accuracy: as known() found it, which the job asked first, else trained."""
        if seed not in self.accuracies:
            operator = self.p.original_operator
            network = None if operator is None else _stand_in(operator, self.settings.backbone)
            [run] = train_over_seeds(network, self.settings, self.p.training, [seed], progress, self.data)
            self.accuracies[seed] = run.accuracy
        return self.accuracies[seed]


def _store(ctx):
    """The job's store, where the original's trainings are shared (None: a context without one,
    such as a Ray task's, whose job then trains the original seeds it is not given)."""
    try:
        return ctx.store
    except (AttributeError, ExecutorError):
        return None


def _part(ctx, start: float, share: float, seeds: tuple[int, ...], what: str = ""):
    """Progress of one training among the seeds': from `start` seeds done, `share` of a seed."""
    return lambda fraction, message: ctx.progress((start + share * fraction) / len(seeds), f"{what}{message}")


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
