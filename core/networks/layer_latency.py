"""The latency of candidate operators standing in for a backbone's layers, for the per-layer
rule when it picks by measured latency (core.train.per_layer.assign_per_layer's `timing`).

Each candidate is measured at each layer's sizes in the deployment network (DeploySettings:
the backbone at its deployment width and resolution, where `tessera evaluate` times whole
networks), by the measure job's own code (core.compile.handlers.measure_call: TVM's kernel,
tuned with MetaSchedule for `trials` trials, its output checked against PyTorch's, timed), in
one spawned worker process for all of them, so TVM is imported once and never here. Layers of
one shape are measured once per operator; a layer where the operator runs m copies side by
side costs m kernel calls (`copies` says how many: core.train.per_layer.layer_copies). A
measurement that fails, or whose timing is in doubt (a number in doubt never ranks), leaves its
operator out at those layers, with the reason; a crashed worker leaves every one out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..compile.payloads import MeasurePayload
from ..data.conv_fit import ConvShape, layer_bindings
from ..data.swap_convs import conv_shapes
from ..errors import TesseraError
from ..ir.graph import OperatorGraph
from ..ir.serialize import content_hash, to_document
from ..jobs.isolate import call_in_subprocess
from ..store.measurement import Measurement
from .settings import DeploySettings

Progress = Callable[[float, str], None]


@dataclass
class LayerLatency:
    """Times (operator, layer) pairs in the deployment network `deploy`; `copies`: how many
    kernel calls the operator makes standing in for a layer; `tuning_root`: where the tuning
    databases are kept and reused (None: the user's)."""

    deploy: DeploySettings
    copies: Callable[[OperatorGraph, ConvShape], int]
    tuning_root: str | None = None
    progress: Progress | None = None

    def __call__(self, wanted: list[tuple[OperatorGraph, str]]) -> dict[tuple[str, str], float | str]:
        """(operator name, layer) -> milliseconds per inference of the layer, or why not timed."""
        shapes = conv_shapes(self.deploy.spec)
        sized: dict[tuple[str, ConvShape], tuple[OperatorGraph, ConvShape]] = {}
        for graph, layer in wanted:
            sized.setdefault((content_hash(graph), shapes[layer]), (graph, shapes[layer]))
        payloads = [self._payload(graph, shape) for graph, shape in sized.values()]
        try:
            answers = call_in_subprocess(
                "core.networks.layer_latency:measure_layers", {"payloads": payloads}, on_progress=self.progress
            )
        except TesseraError as e:  # the worker crashed or could not start: nothing was timed
            answers = [str(e)] * len(payloads)
        per_shape = {}
        for (key, (graph, shape)), answer in zip(sized.items(), answers):
            ms = _latency(Measurement.from_dict(answer)) if isinstance(answer, dict) else answer
            per_shape[key] = ms * self.copies(graph, shape) if isinstance(ms, float) else ms
        return {(g.name, layer): per_shape[content_hash(g), shapes[layer]] for g, layer in wanted}

    def _payload(self, graph: OperatorGraph, shape: ConvShape) -> dict:
        d = self.deploy
        payload = MeasurePayload(
            to_document(graph),
            layer_bindings(graph, shape),
            repeat=d.repeat,
            min_repeat_ms=d.min_repeat_ms,
            tuning_root=self.tuning_root,
            tune_trials=d.trials,
            cost_model=d.cost_model,
        )
        return payload.to_dict()


def _latency(m: Measurement) -> float | str:
    """The kernel's latency, or why it cannot rank: its timing is in doubt."""
    return f"timing {m.timing_note}" if m.timing_note else m.latency_ms


def measure_layers(payloads: list[dict], progress: Progress | None = None) -> list[dict | str]:
    """In the worker: each measure payload's Measurement as JSON, or why it failed."""
    from ..compile.handlers import measure_call  # TVM: the worker only

    answers: list[dict | str] = []
    for i, payload in enumerate(payloads):
        report = (lambda f, m, i=i: progress((i + f) / len(payloads), m)) if progress else None
        try:
            answers.append(measure_call(payload, report).to_dict())
        except TesseraError as e:
            answers.append(str(e))
    return answers
