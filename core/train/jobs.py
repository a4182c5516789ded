"""Job handlers of the accuracy side: kinds "fisher", "train" and "e2e".

Each is handler(payload, ctx) -> dict, run by a worker process. The payload holds the
operator document under "operator" and EvalSettings' fields (dataset, backbone, width,
resolution, seed, ...); "train" adds TrainConfig's fields and an optional "best_curve"
(accuracy per epoch to early-stop against, read from the store when the job is queued), and
keeps the accuracy per epoch so far as its partial result while it trains (the window draws it);
"e2e" adds "deploy" (core.networks.end_to_end.DeploySettings: where and how both networks are
tuned and timed). All three results carry the store's score fields under "score"; everything
else stays with the job's result.
"""

from __future__ import annotations

from pathlib import Path

import torch

from core.ir.serialize import graph_from_document
from core.jobs.errors import JobCancelled

from .errors import EvaluationError
from .proxy import TrainConfig, train_proxy
from .screening import screen_for
from .settings import EvalSettings

THREADS = 1  # torch threads per worker: more oversubscribe the 2 shared cores (4-8x slower under load)


def _graph(payload: dict):
    if not isinstance(payload.get("operator"), dict):
        raise EvaluationError("the job payload has no operator document under 'operator'")
    return graph_from_document(payload["operator"], source="the job's operator")


def _setup(payload: dict, ctx):
    """The candidate network and its Fisher Potential against the original's."""
    torch.set_num_threads(THREADS)
    graph = _graph(payload)
    settings = EvalSettings.from_payload(payload)
    ctx.progress(0.02, f"loading {settings.dataset}")
    screen = screen_for(settings)
    ctx.progress(0.05, f"building {settings.spec.label} with {graph.name or 'the operator'}")
    candidate, report = screen.candidate(graph)
    ctx.progress(0.08, f"Fisher Potential over {len(report.replaced)} replaced layers")
    return settings, screen, candidate, report, screen.score(candidate, report)


def _score(settings: EvalSettings, **fields) -> dict:
    return {"dataset": settings.dataset_label, "backbone": settings.spec.label, **fields}


def fisher_job(payload: dict, ctx) -> dict:
    """Fisher Potential of the candidate vs the original network, at initialisation."""
    settings, _, _, report, fisher = _setup(payload, ctx)
    return {
        "score": _score(settings, epochs=0, fisher_potential=fisher["fisher_potential"]),
        **fisher,
        "replacement": report.to_json(),
    }


def train_job(payload: dict, ctx) -> dict:
    """Fisher Potential at initialisation, then proxy training with Canvas's early stop."""
    config = TrainConfig.from_dict(payload)
    best = payload.get("best_curve")
    if best is not None and (
        not isinstance(best, list) or not all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in best)
    ):
        raise EvaluationError(f"best_curve must be a list of accuracies, got {best!r}")
    settings, screen, candidate, report, fisher = _setup(payload, ctx)
    trained = train_proxy(
        candidate,
        screen.split,
        config,
        best,
        lambda fraction, message: ctx.progress(0.1 + 0.9 * fraction, message),
        lambda curve: ctx.partial({"accuracy_per_epoch": curve, "epochs_planned": config.epochs}),
    )
    curve = trained.accuracy_per_epoch
    return {
        "score": _score(
            settings,
            epochs=len(curve),
            accuracy=trained.accuracy,
            accuracy_per_epoch=curve,
            fisher_potential=fisher["fisher_potential"],
        ),
        **fisher,
        **trained.to_json(),
        "epochs_planned": config.epochs,
        "classes": screen.num_classes,
        "replacement": report.to_json(),
    }


def e2e_job(payload: dict, ctx) -> dict:
    """Inference latency (batch 1) of the whole network with the operator against the original,
    both with tuned kernels, at the deployment size of payload "deploy" (core.networks.end_to_end:
    backbone, width, resolution, trials per kernel, transfer, sources, ...; the backbone defaults
    to the evaluation's), and PyTorch's eager times of both. "tuning_root": where the tuning
    databases are (default the user's)."""
    from core.compile.transfer_sources import payload_sources  # TVM: worker only
    from core.compile.tune import tuning_root
    from core.networks.end_to_end import DeploySettings, tuned_end_to_end

    settings = EvalSettings.from_payload(payload)
    graph = _graph(payload)
    deploy = DeploySettings.from_payload({"backbone": settings.backbone, **(payload.get("deploy") or {})})
    root = Path(payload["tuning_root"]).expanduser() if payload.get("tuning_root") else tuning_root()

    def check_cancelled() -> None:
        if ctx.cancelled():
            raise JobCancelled(f"timing {graph.name or 'the operator'} in {deploy.label} was cancelled")

    result = tuned_end_to_end(
        graph, deploy, payload_sources(list(deploy.sources) or None, root), root, ctx.progress, check_cancelled
    )
    return {
        **result,
        "score": _score(
            settings,
            **result["score"],
            deploy=deploy.label,
            e2e_torch_ms=result["torch_latency_ms"],
            e2e_torch_baseline_ms=result["torch_baseline_ms"],
        ),
    }
