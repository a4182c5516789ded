"""Swap a backbone's standard convolutions for an IR operator, and say what happened to each.

A conv is *standard* when groups=1, stride 1, dilation 1, zero "same" padding and a
square odd kernel: it maps [C_in, H, W] -> [C_out, H, W] like the operator template.
For each one the operator's size variables are bound from the layer (the input
template's variables from [C_in, H, W], the output's channel variable from C_out,
K from the kernel; other coefficients such as G keep the operator's defaults).
When the operator's output channel count c differs from C_out, Canvas's template
composition applies: C_out = m*c runs m independent copies side by side and
concatenates them; c = m*C_out sums the output's m consecutive groups of C_out
channels. Anything else leaves the layer alone, with the reason in the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import torch
from torch import nn

from core.codegen.conv_spec import ConvSpec
from core.codegen.to_torch import module_class
from core.errors import TesseraError
from core.ir.graph import OperatorGraph

from .assignment import Assignment, as_assignment
from .backbones import build_backbone
from .errors import LayerMismatch
from .replacement import ConvShape, LayerOutcome, Replacement, layer_bindings
from .specs import BackboneSpec


@dataclass(frozen=True)
class ReplacementReport:
    operator: str
    layers: tuple[LayerOutcome, ...]

    @property
    def replaced(self) -> list[str]:
        return [o.name for o in self.layers if o.replaced]

    def lines(self) -> list[str]:
        head = f"{self.operator}: replaced {len(self.replaced)} of {len(self.layers)} convolutions"
        return [head, *(o.line() for o in self.layers)]

    def record(self) -> Replacement:
        """What a job's result keeps of it."""
        return Replacement(self.operator, len(self.replaced), self.layers)


class ReplacedConv(nn.Module):
    """The operator standing in for one conv: `parts` holds one instance ("direct" or "sum")
    or m instances whose outputs are concatenated ("concat")."""

    def __init__(self, parts: list[nn.Module], mode: str, c_out: int, bias: bool):
        super().__init__()
        self.parts, self.mode, self.c_out = nn.ModuleList(parts), mode, c_out
        self.bias = nn.Parameter(torch.zeros(c_out)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mode == "concat":
            y = torch.cat([p(x) for p in self.parts], dim=1)
        else:
            y = self.parts[0](x)
            if self.mode == "sum":
                y = y.reshape(y.shape[0], -1, self.c_out, *y.shape[2:]).sum(dim=1)
        if self.bias is not None:
            y = y + self.bias.view(1, -1, 1, 1)
        # an einsum's result may come out channels-last; as a conv would, hand on NCHW memory.
        # (Also keeps torch's oneDNN off its channels-last 1x1 stride-2 backward-weights path,
        # which writes past its workspace when C_in < 8: oneDNN issue 6035, heap corruption.)
        return y.contiguous()


def conv_input_sizes(model: nn.Module, resolution: int, in_channels: int = 3) -> dict[str, tuple[int, int]]:
    """(H, W) of the input of every nn.Conv2d, from one forward pass at `resolution`."""
    sizes: dict[str, tuple[int, int]] = {}

    def record(name: str):
        def hook(module, args) -> None:
            sizes.setdefault(name, tuple(args[0].shape[-2:]))

        return hook

    hooks = [m.register_forward_pre_hook(record(name)) for name, m in model.named_modules() if isinstance(m, nn.Conv2d)]
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            model(torch.zeros(1, in_channels, resolution, resolution))
    finally:
        model.train(was_training)
        for h in hooks:
            h.remove()
    return sizes


def replace_convs(
    model: nn.Module,
    stand_in: OperatorGraph | Assignment,
    resolution: int,
    in_channels: int = 3,
    sizes: dict[str, tuple[int, int]] | None = None,
) -> ReplacementReport:
    """Replace, in place, the standard convs the stand-in fits: an operator tries every one, an
    assignment the layers it names (FormatError naming any the model does not have); the
    report lists all convs. The model takes [N, in_channels, resolution, resolution]; `sizes`:
    conv_input_sizes of the model when known already. Each operator is tried once per layer shape."""
    sizes = sizes if sizes is not None else conv_input_sizes(model, resolution, in_channels)
    convs = list(_convs(model, sizes))
    plan = as_assignment(stand_in, [name for name, *_ in convs])
    plan.check_layers([name for name, *_ in convs])
    named = len(plan.operators) > 1  # say which operator went where
    tried: dict[tuple[str, ConvShape], tuple | LayerMismatch] = {}
    outcomes = []
    for name, conv, layer, why_not in convs:
        outcome = {"name": name, **asdict(layer)}
        graph = plan.operator_at(name)
        if graph is None or why_not:
            outcomes.append(LayerOutcome(**outcome, replaced=False, detail=why_not or "not assigned"))
            continue
        try:
            module, how = _operator_for(graph, conv, layer, tried)
        except LayerMismatch as e:
            outcomes.append(LayerOutcome(**outcome, replaced=False, detail=f"{graph.name}: {e}" if named else str(e)))
            continue
        model.set_submodule(name, module)
        outcomes.append(LayerOutcome(**outcome, replaced=True, detail=f"{graph.name}: {how}" if named else how))
    label = plan.name or next(iter(plan.operators), "") or "operator"
    return ReplacementReport(label, tuple(outcomes))


def searched_layers(spec: BackboneSpec, num_classes: int = 10) -> Counter[ConvShape]:
    """The standard convolutions of a backbone a searched operator stands in for, with how
    many layers have each shape: all but the stem, whose few image channels (3) no grouped
    operator divides (replace_convs keeps it when the operator does not fit)."""
    convs = [(layer, why_not) for _, _, layer, why_not in _backbone_convs(spec, num_classes)]
    return Counter(layer for layer, why_not in convs[1:] if not why_not)


def conv_names(spec: BackboneSpec) -> list[str]:
    """Every convolution of a backbone, as its modules name it (what an assignment names)."""
    return [name for name, *_ in _backbone_convs(spec)]


def _backbone_convs(spec: BackboneSpec, num_classes: int = 10) -> list[tuple[str, nn.Conv2d, ConvShape, str]]:
    model = build_backbone(spec, num_classes, seed=None)
    return list(_convs(model, conv_input_sizes(model, spec.resolution)))


def _convs(model: nn.Module, sizes: dict[str, tuple[int, int]]) -> Iterator[tuple[str, nn.Conv2d, ConvShape, str]]:
    """Every nn.Conv2d of the model in order, with its shape and why it is not standard ("" if it is)."""
    for name, conv in [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Conv2d)]:
        h, w = sizes.get(name, (0, 0))
        layer = ConvShape(conv.in_channels, conv.out_channels, h, w, conv.kernel_size[0])
        why_not = ConvSpec.of_module(conv).why_not_standard() or (
            "" if name in sizes else "not used in the forward pass"
        )
        yield name, conv, layer, why_not


def _operator_for(graph: OperatorGraph, conv: nn.Conv2d, layer: ConvShape, tried: dict) -> tuple[nn.Module, str]:
    """The operator standing in for `conv`. `tried` keeps, per operator and layer shape, the module class and
    its output shape (or the mismatch), so a network's many layers of one shape generate the
    code and run the trial input once; each layer still gets its own freshly initialised module."""
    key = (graph.name, layer)
    if key not in tried:
        tried[key] = _layer_class(graph, layer)
    if isinstance(tried[key], LayerMismatch):
        raise tried[key]
    cls, shape = tried[key]
    c_out = layer.c_out
    if len(shape) != 3 or shape[1:] != (layer.height, layer.width):
        raise LayerMismatch(
            f"operator output {list(shape)} does not keep the {layer.height}x{layer.width} spatial size"
        )
    c = shape[0]
    if c == c_out:
        return ReplacedConv([cls()], "direct", c_out, conv.bias is not None), "direct"
    if c_out % c == 0:
        m = c_out // c
        return ReplacedConv([cls() for _ in range(m)], "concat", c_out, conv.bias is not None), (
            f"{m} copies concatenated"
        )
    if c % c_out == 0:
        return (ReplacedConv([cls()], "sum", c_out, conv.bias is not None), f"sum of {c // c_out} channel groups")
    raise LayerMismatch(f"operator gives {c} channels, the layer needs {c_out} (neither divides the other)")


def _layer_class(graph: OperatorGraph, layer: ConvShape) -> tuple | LayerMismatch:
    """(module class, output shape without the batch) of the operator at one layer's sizes, or why not."""
    c_in, h, w = layer.c_in, layer.height, layer.width
    try:
        cls = module_class(graph, layer_bindings(graph, layer))
    except TesseraError as e:
        return LayerMismatch(f"binding error: {e}")
    try:
        with torch.no_grad():
            return cls, tuple(cls()(torch.zeros(1, c_in, h, w)).shape[1:])
    except RuntimeError as e:
        return LayerMismatch(f"operator does not run on [{c_in}, {h}, {w}]: {e}")
