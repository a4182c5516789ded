"""A network to time an operator in, named on the command line: a user's own model,
`path/to/model.py:factory` (the function in that file that builds the nn.Module), or a
built-in backbone by name (`resnet18`, ...), both entries of one mechanism (ModelRef).

`tessera evaluate OP --model REF --input 3,96,96` replaces the convolutions the operator takes
(core.data.swap_convs, the kinds of --replace) and reports FLOPs (torch's count, batch 1),
parameters and tuned end-to-end latency of the replaced network against the same network
unreplaced, through torch.export into TVM's Relax front end (core.networks.end_to_end).
Loading a user's file runs their code, at their explicit request; it happens only in the
worker process `evaluate_model_call` runs in (core.jobs.isolate), never in the CLI's or the
window's. Parsing a reference imports neither torch nor TVM."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from core.errors import TesseraError

from ..data.specs import BACKBONE_NAMES


class ModelError(TesseraError):
    """A model reference or input size that cannot be used, or a model that cannot be built."""


@dataclass(frozen=True)
class ModelRef:
    """`path` and `factory` for a user's file, or `backbone` for a built-in network."""

    path: str | None = None
    factory: str | None = None
    backbone: str | None = None

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        """'model.py:build' or a backbone name; ModelError saying what is wrong."""
        if text in BACKBONE_NAMES:
            return cls(backbone=text)
        path, colon, factory = text.rpartition(":")
        if not colon or not path.endswith(".py") or not factory.isidentifier():
            raise ModelError(
                f"--model {text!r}: give FILE.py:FUNCTION (the function that builds your nn.Module) "
                f"or a built-in backbone ({', '.join(BACKBONE_NAMES)})"
            )
        if not Path(path).expanduser().is_file():
            raise ModelError(f"--model {text!r}: no such file {path}")
        return cls(path=str(Path(path).expanduser().resolve()), factory=factory)

    @property
    def label(self) -> str:
        return self.backbone or f"{Path(self.path or '').name}:{self.factory}"

    def build(self, input_shape: tuple[int, int, int], num_classes: int = 10):
        """The network (worker processes only: this imports torch, and runs a user's file)."""
        from torch import nn

        if self.backbone:
            from ..data.backbones import build_backbone
            from ..data.specs import BackboneSpec
            from .settings import STANDARD_WIDTH

            side = input_shape[1]
            return build_backbone(BackboneSpec(self.backbone, STANDARD_WIDTH[self.backbone], side), num_classes)
        assert self.path and self.factory
        module = _run_file(self.path, f"tessera_user_model_{Path(self.path).stem}")
        factory = getattr(module, self.factory, None)
        if not callable(factory):
            raise ModelError(f"{self.path} has no function {self.factory}")
        model = factory()
        if not isinstance(model, nn.Module):
            raise ModelError(f"{self.label} returned {type(model).__name__}, not a torch nn.Module")
        return model


def _run_file(path: str, name: str):
    """The Python file at `path` run as module `name` (worker processes only: it runs the file's code)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_input(text: str) -> tuple[int, int, int]:
    """'3,96,96' -> (3, 96, 96): channels, height, width of one example."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ModelError(f"--input {text!r}: give channels,height,width as three positive integers, e.g. 3,96,96")
    c, h, w = (int(p) for p in parts)
    return c, h, w


def evaluate_model_call(
    document: dict, model: str, input_shape: list[int], deploy: dict, tuning_root: str | None = None, progress=None
) -> dict:
    """FLOPs, parameters and tuned end-to-end latency of the model with the operator and without
    (core.jobs.isolate: JSON in, JSON out)."""
    import copy

    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from ..compile.transfer_sources import payload_sources
    from ..compile.tune import tuning_root as default_root
    from ..data.swap_convs import replace_convs
    from ..ir.serialize import graph_from_document
    from .end_to_end import Networks, tuned_end_to_end
    from .settings import DeploySettings

    graph = graph_from_document(document)
    settings = DeploySettings.from_payload(deploy)
    ref, shape = ModelRef.parse(model), (input_shape[0], input_shape[1], input_shape[2])
    torch.manual_seed(settings.seed)
    try:
        original = ref.build(shape, settings.num_classes).eval()
    except TesseraError:
        raise
    except Exception as e:  # the user's code may raise anything: say where it came from
        raise ModelError(f"{ref.label} failed to build the model: {type(e).__name__}: {e}") from None
    example = torch.randn(1, *shape, generator=torch.Generator().manual_seed(0))
    replaced = copy.deepcopy(original)
    report = replace_convs(replaced, graph, shape[1:], shape[0], kinds=settings.replace)

    def measured(net) -> dict:
        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter:
            net(example)
        return {"flops": counter.get_total_flops(), "params": sum(p.numel() for p in net.parameters())}

    sizes = {"candidate": measured(replaced), "original": measured(original)}
    networks = Networks(original, copy.deepcopy(original), example, ref.label, ref.label)
    root = Path(tuning_root).expanduser() if tuning_root else default_root()
    sources = payload_sources(list(settings.sources) or None, root)
    e2e = tuned_end_to_end(
        graph, settings, sources, root, progress or (lambda fraction, message: None), networks=networks
    )
    return {
        "model": ref.label,
        "input": list(shape),
        "operator": report.operator,
        "report": report.lines(),
        **{f"{name}_{k}": v for name, figures in sizes.items() for k, v in figures.items()},
        "latency_ms": e2e.latency_ms,
        "baseline_latency_ms": e2e.baseline_latency_ms,
        "torch_latency_ms": e2e.torch_latency_ms,
        "torch_baseline_ms": e2e.torch_baseline_ms,
        "speedup": e2e.speedup,
        "speedup_low": e2e.speedup_low,
        "speedup_high": e2e.speedup_high,
        "untuned_kernels": list(e2e.untuned_kernels),
        "max_abs_error": e2e.max_abs_error,
        "threads": e2e.threads,
        "load": e2e.load,
    }


def preview_call(exported: str, model: str, input_shape: list[int], kinds: list[str]) -> list[str]:
    """What the `replace_convs` of an exported torch-replace file does to the model: its report,
    then the replaced model run on a batch of two (core.jobs.isolate: in a worker process,
    which runs the user's model file and our exported one)."""
    import warnings

    import torch

    operator = _run_file(exported, "tessera_exported_operator")
    ref, shape = ModelRef.parse(model), (input_shape[0], input_shape[1], input_shape[2])
    torch.manual_seed(0)
    net = ref.build(shape).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nothing replaced: the report below says so
        report = operator.replace_convs(net, torch.randn(1, *shape), kinds=tuple(kinds))
    with torch.no_grad():
        out = net(torch.randn(2, *shape))
    shown = list(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
    return [*str(report).splitlines(), f"the replaced {ref.label} runs on [2, {', '.join(map(str, shape))}]: {shown}"]
