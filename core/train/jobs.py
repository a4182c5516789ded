"""Job handlers of the accuracy side: kinds "fisher", "train" and "e2e".

Each is handler(payload, ctx) -> dict, run by a worker process. The payload holds the
operator document under "operator" and EvalSettings' fields (dataset, backbone, width,
resolution, seed, ...); "train" adds TrainConfig's fields and an optional "best_curve"
(accuracy per epoch to early-stop against, read from the store when the job is queued);
"e2e" adds "repeat" and "min_repeat_ms" for the timer. All three results carry the store's score
fields under "score"; everything else stays with the job's result.
"""

from __future__ import annotations

import torch

from core.ir.serialize import graph_from_document

from .candidate import EvalSettings, load_split, networks, screen
from .errors import EvaluationError
from .proxy import TrainConfig, train_proxy

THREADS = 1  # torch threads per worker: more oversubscribe the 2 shared cores (4-8x slower under load)


def _setup(payload: dict, ctx):
    torch.set_num_threads(THREADS)
    if not isinstance(payload.get("operator"), dict):
        raise EvaluationError("the job payload has no operator document under 'operator'")
    graph = graph_from_document(payload["operator"], source="the job's operator")
    settings = EvalSettings.from_payload(payload)
    ctx.progress(0.02, f"loading {settings.dataset}")
    split = load_split(settings)
    ctx.progress(0.05, f"building {settings.spec.label} with {graph.name or 'the operator'}")
    original, candidate, report = networks(graph, settings, split.train.num_classes)
    return settings, split, original, candidate, report


def _score(settings: EvalSettings, **fields) -> dict:
    return {"dataset": settings.dataset_label, "backbone": settings.spec.label, **fields}


def fisher_job(payload: dict, ctx) -> dict:
    """Fisher Potential of the candidate vs the original network, at initialisation."""
    settings, split, original, candidate, report = _setup(payload, ctx)
    ctx.progress(0.5, f"Fisher Potential over {len(report.replaced)} replaced layers")
    fisher = screen(original, candidate, report, split, settings)
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
    settings, split, original, candidate, report = _setup(payload, ctx)
    fisher = screen(original, candidate, report, split, settings)
    del original
    trained = train_proxy(
        candidate, split, config, best, lambda fraction, message: ctx.progress(0.1 + 0.9 * fraction, message)
    )
    curve = trained.accuracy_per_epoch
    return {
        "score": _score(
            settings,
            epochs=len(curve),
            accuracy=curve[-1],
            accuracy_per_epoch=curve,
            fisher_potential=fisher["fisher_potential"],
        ),
        **fisher,
        **trained.to_json(),
        "epochs_planned": config.epochs,
        "replacement": report.to_json(),
    }


def e2e_job(payload: dict, ctx) -> dict:
    """Inference latency (batch 1) of the whole network, original and with the operator,
    TVM-compiled; optional "repeat" and "min_repeat_ms"."""
    from core.compile.target import core_count, local_target, use_threads  # TVM: worker only

    from .e2e import time_network

    timer = {"repeat": payload.get("repeat", 10), "min_repeat_ms": payload.get("min_repeat_ms", 100)}
    for key, value in timer.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
            raise EvaluationError(f"timer setting {key} must be a number >= 1, got {value!r}")
    settings, split, original, candidate, report = _setup(payload, ctx)
    use_threads(core_count())
    target, example = local_target(core_count()), torch.from_numpy(split.val.images[:1])
    ctx.progress(0.1, f"compiling and timing the original {settings.spec.label}")
    base = time_network(
        original, example, target, f"original {settings.spec.label}", int(timer["repeat"]), timer["min_repeat_ms"]
    )
    ctx.progress(0.5, f"compiling and timing {settings.spec.label} with {report.operator}")
    ours = time_network(
        candidate,
        example,
        target,
        f"{settings.spec.label} with {report.operator}",
        int(timer["repeat"]),
        timer["min_repeat_ms"],
    )
    speedup = base.latency.median_ms / ours.latency.median_ms
    return {
        "score": _score(
            settings, e2e_latency_ms=ours.latency.median_ms, e2e_baseline_ms=base.latency.median_ms, e2e_speedup=speedup
        ),
        "backbone": settings.spec.label,
        "resolution": settings.resolution,
        "batch": 1,
        "threads": core_count(),
        "latency_ms": ours.latency.median_ms,
        "latency_std_ms": ours.latency.std_ms,
        "baseline_latency_ms": base.latency.median_ms,
        "baseline_std_ms": base.latency.std_ms,
        "speedup": speedup,
        "params": sum(p.numel() for p in candidate.parameters()),
        "baseline_params": sum(p.numel() for p in original.parameters()),
        "compile_s": ours.compile_s,
        "baseline_compile_s": base.compile_s,
        "replacement": report.to_json(),
    }
