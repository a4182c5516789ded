"""What one "evaluate accuracy" request queues for its operators (through core.jobs.submit),
for `tessera evaluate` and the window's Evaluate Accuracy alike: a "fisher" job (Fisher
Potential only), or a "train" job (Fisher Potential at initialisation, then proxy training
early-stopped against the best curve stored for the same dataset, backbone and epochs),
with `seeds` or a seed `rule` a "test" job (the network and the original trained again with each
of the seeds after the settings' own, tested on the test split, paired, judged against `margin`;
with the rule, seeds are added until the interval decides, core.train.sequential), and,
with a deployment, an "e2e" job (the network with the operator against the original,
both with tuned kernels).

Building the payloads imports neither torch nor TVM."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..data.assignment import Assignment
from ..data.dataset_check import check_source
from ..jobs.contract import Payload
from ..jobs.submit import PlannedJob, Subject
from ..networks.settings import DeploySettings
from ..store import Store
from .early_stop import best_curve, check_theta
from .errors import EvaluationError
from .paired import MARGIN, SEEDS, report_seeds
from .payloads import E2EPayload, FisherPayload, HeldOutPayload, TrainPayload
from .sequential import SeedRule
from .settings import EvalSettings, TrainConfig


@dataclass(frozen=True)
class AccuracyRequest:
    settings: EvalSettings
    epochs: int = TrainConfig.epochs
    theta: float = 0.5
    max_batches: int | None = None  # per epoch, for quick runs
    device: str = TrainConfig.device  # where training runs (core.train.device)
    amp: bool = TrainConfig.amp  # mixed precision, CUDA only
    seeds: int = SEEDS  # test accuracy over this many seeds, paired with the original's (0: none)
    margin: float = MARGIN  # what the paired interval is judged against
    rule: SeedRule | None = None  # add seeds until the interval decides (its margin is `margin`), not `seeds`
    fisher_only: bool = False  # no training: Fisher Potential at initialisation only
    deploy: DeploySettings | None = None  # time the network end to end, tuned, at this size
    tuning_root: str | None = None  # where the e2e job keeps tuning databases (None: the user's)
    subjects: tuple[Subject, ...] = ()  # the operators (the window adds them to a dialog's request)
    assignments: tuple[Assignment, ...] = ()  # operators per layer; their scores stay on their jobs

    def __post_init__(self):
        check_source(self.settings.dataset)  # DatasetError names a missing one
        if isinstance(self.epochs, bool) or not isinstance(self.epochs, int) or self.epochs < 1:
            raise EvaluationError(f"epochs must be a whole number >= 1, got {self.epochs!r}")
        if self.max_batches is not None and (not isinstance(self.max_batches, int) or self.max_batches < 1):
            raise EvaluationError(f"batches per epoch must be a whole number >= 1, got {self.max_batches!r}")
        check_theta(self.theta)
        if isinstance(self.seeds, bool) or not isinstance(self.seeds, int) or self.seeds < 0:
            raise EvaluationError(f"seeds must be a whole number >= 0, got {self.seeds!r}")
        if isinstance(self.margin, bool) or not isinstance(self.margin, (int, float)) or not 0 <= self.margin <= 1:
            raise EvaluationError(f"the margin must be a fraction between 0 and 1 (0.01: 1 point), got {self.margin!r}")
        _ = self.training  # TrainConfig checks the device and mixed precision

    @property
    def training(self) -> TrainConfig:
        return TrainConfig(
            epochs=self.epochs,
            theta=self.theta,
            max_batches=self.max_batches,
            seed=self.settings.seed,
            device=self.device,
            amp=self.amp,
        )

    def describe(self) -> str:
        """'Fisher Potential', 'proxy training (10 epochs)', '... and tuned end-to-end latency'."""
        what = "Fisher Potential" if self.fisher_only else f"proxy training ({self.epochs} epochs)"
        if self.rule is not None and not self.fisher_only:
            what += f", test accuracy over {self.rule.first} to {self.rule.cap} seeds (until the verdict decides)"
        elif self.seeds and not self.fisher_only:
            what += f", test accuracy over {self.seeds} seeds"
        if self.deploy is not None and not self.fisher_only:
            what += f" and tuned end-to-end latency at {self.deploy.label}"
        return f"{what} in {self.settings.spec.label} on {self.settings.dataset_label}"

    def payloads(self, document: dict, best: list[float] | None) -> list[Payload]:
        """The payload of each job for the operator (or assignment) `document`; `best`: the
        curve to early-stop against (best_curve of the store the jobs go to)."""
        if self.fisher_only:
            return [FisherPayload(document, self.settings)]
        training = self.training
        jobs: list[Payload] = [TrainPayload(document, self.settings, training, tuple(best) if best else None)]
        if self.rule is not None:
            seeds = report_seeds(self.settings.seed, self.rule.cap)
            rule = replace(self.rule, margin=self.margin)
            jobs.append(HeldOutPayload(document, self.settings, training, seeds, margin=self.margin, rule=rule))
        elif self.seeds:
            seeds = report_seeds(self.settings.seed, self.seeds)
            jobs.append(HeldOutPayload(document, self.settings, training, seeds, margin=self.margin))
        if self.deploy is not None:
            root = str(Path(self.tuning_root).expanduser().resolve()) if self.tuning_root else None
            jobs.append(E2EPayload(document, self.deploy, self.settings, root))
        return jobs

    def plan(self, store: Store) -> tuple[list[PlannedJob], list[str]]:
        """Each subject's and assignment's jobs, early-stopped against the best curve stored
        for the same dataset, backbone and epochs."""
        s = self.settings
        best = best_curve(store, s.dataset_label, s.spec.label, self.epochs)
        planned = []
        for subject in self.subjects:
            operator_id, version = subject.save(store)
            planned += [
                PlannedJob(p, operator_id, input_key=subject.input_key, input_version=version)
                for p in self.payloads(subject.document, best)
            ]
        for assignment in self.assignments:
            planned += [PlannedJob(p) for p in self.payloads(assignment.to_document(), best)]
        return planned, []
