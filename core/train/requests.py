"""What one "evaluate accuracy" request queues for an operator, for `tessera evaluate` and the
window's Evaluate Accuracy alike: a "fisher" job (Fisher Potential only), or a "train" job
(Fisher Potential at initialisation, then proxy training early-stopped against the best curve
stored for the same dataset, backbone and epochs), and, with a deployment, an "e2e" job (the
network with the operator against the original, both with tuned kernels).

Building the payloads imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..data.datasets import check_source
from ..ir.serialize import content_hash
from ..jobs.queue import JobQueue
from ..networks.settings import DeploySettings
from ..store import Store
from .early_stop import best_curve, check_theta
from .errors import EvaluationError
from .settings import EvalSettings


@dataclass(frozen=True)
class AccuracyRequest:
    settings: EvalSettings
    epochs: int = 5
    theta: float = 0.5
    max_batches: int | None = None  # per epoch, for quick runs
    fisher_only: bool = False  # no training: Fisher Potential at initialisation only
    deploy: DeploySettings | None = None  # time the network end to end, tuned, at this size
    tuning_root: str | None = None  # where the e2e job keeps tuning databases (None: the user's)

    def __post_init__(self):
        check_source(self.settings.dataset)  # DatasetError names a missing one
        if isinstance(self.epochs, bool) or not isinstance(self.epochs, int) or self.epochs < 1:
            raise EvaluationError(f"epochs must be a whole number >= 1, got {self.epochs!r}")
        if self.max_batches is not None and (not isinstance(self.max_batches, int) or self.max_batches < 1):
            raise EvaluationError(f"batches per epoch must be a whole number >= 1, got {self.max_batches!r}")
        check_theta(self.theta)

    def describe(self) -> str:
        """'Fisher Potential', 'proxy training (5 epochs)', '... and tuned end-to-end latency'."""
        what = "Fisher Potential" if self.fisher_only else f"proxy training ({self.epochs} epochs)"
        if self.deploy is not None and not self.fisher_only:
            what += f" and tuned end-to-end latency at {self.deploy.label}"
        return f"{what} in {self.settings.spec.label} on {self.settings.dataset_label}"

    def jobs(self, document: dict, best: list[float] | None) -> list[tuple[str, dict]]:
        """(kind, payload) of each job for the operator `document`; `best`: the curve to
        early-stop against (best_curve of the store the jobs go to)."""
        payload = {"operator": document, **self.settings.to_payload()}
        if self.fisher_only:
            return [("fisher", payload)]
        jobs = [
            (
                "train",
                {
                    **payload,
                    "epochs": self.epochs,
                    "theta": self.theta,
                    "max_batches": self.max_batches,
                    "best_curve": best,
                },
            )
        ]
        if self.deploy is not None:
            e2e = {**payload, "deploy": self.deploy.to_payload()}
            if self.tuning_root:
                e2e["tuning_root"] = str(Path(self.tuning_root).expanduser().resolve())
            jobs.append(("e2e", e2e))
        return jobs


def queue_accuracy(
    store: Store,
    document: dict,
    name: str,
    request: AccuracyRequest,
    origin: str = "hand-made",
    input_key: str | None = None,
) -> list[int]:
    """Save the operator (if new) and queue the request's jobs for it, in one transaction;
    jobs with an `input_key` carry the document's content hash, so that a later edit of the
    same input cancels them (JobQueue.cancel_stale)."""
    queue = JobQueue(store)
    s = request.settings
    with store.write():
        operator_id = store.add_operator(document, name, origin)
        best = best_curve(store, s.dataset_label, s.spec.label, request.epochs)
        version = content_hash(document) if input_key else None
        return [
            queue.submit(kind, payload, operator_id=operator_id, input_key=input_key, input_version=version)
            for kind, payload in request.jobs(document, best)
        ]
