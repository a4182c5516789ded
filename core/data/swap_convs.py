"""Swap a backbone's convolutions for an IR operator, and say what happened to each.

An operator maps [C_in, H, W] -> [C_out, H, W]. It stands in for a convolution with groups=1,
dilation 1, zero "same" padding (K//2) and a square odd kernel, of the kinds asked
(core.data.specs.REPLACE_KINDS; by default every one of stride 1):
- standard (KxK, stride 1) and pointwise (1x1, stride 1): the operator at the layer's sizes,
  its window K bound to the kernel (1 for a pointwise one; an operator without K keeps its
  own window; one that K = 1 leaves without a valid size is refused, the binding error says why);
- strided (stride s): the input's every s-th row and column, then the operator at that size,
  which is the size of the convolution's output. A strided convolution computes only those
  outputs, so this keeps the operator's FLOPs at what it costs at the smaller size (applying
  it at full size and then keeping every s-th output would cost s^2 times as much). For a
  1x1 convolution it is exact; a KxK operator on the subsampled input reads taps s apart.
For each one the operator's size variables are bound from the layer (the input
template's variables from [C_in, H, W], the output's channel variable from C_out,
K from the kernel; other coefficients such as G keep the operator's defaults).
When the operator's output channel count c differs from C_out, Canvas's template
composition applies: C_out = m*c runs m independent copies side by side and
concatenates them; c = m*C_out sums the output's m consecutive groups of C_out
channels. Anything else leaves the layer alone, with the reason in the report; the report
says for each replaced layer what was done (subsampled, K bound to 1, copies).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace

import torch
from torch import nn

from core.codegen.conv_spec import ConvSpec
from core.codegen.to_torch import module_class
from core.errors import TesseraError
from core.ir.graph import OperatorGraph

from .assignment import Assignment, as_assignment
from .backbones import build_backbone
from .conv_fit import ConvShape, LayerOutcome, Replacement, layer_bindings, replaceable
from .errors import LayerMismatch
from .specs import DEFAULT_REPLACE, REPLACE_KINDS, BackboneSpec


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
    or m instances whose outputs are concatenated ("concat"), applied to every `stride`-th row
    and column of the input."""

    def __init__(self, parts: list[nn.Module], mode: str, c_out: int, bias: bool, stride: int = 1):
        super().__init__()
        self.parts, self.mode, self.c_out, self.stride = nn.ModuleList(parts), mode, c_out, stride
        self.bias = nn.Parameter(torch.zeros(c_out)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride > 1:
            x = x[:, :, :: self.stride, :: self.stride]
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


InputSizes = dict[str, tuple[tuple[int, int], ...]]  # conv name -> every (H, W) it is called at


def conv_input_sizes(model: nn.Module, resolution: int | tuple[int, int], in_channels: int = 3) -> InputSizes:
    """Every (H, W) the input of each nn.Conv2d has, in the order it first has it, from one
    forward pass at `resolution` (a side, or height and width; on the model's device: on the
    meta device it only computes shapes). A conv the model calls at several sizes (a shared
    head) has several."""
    sizes: dict[str, list[tuple[int, int]]] = {}

    def record(name: str):
        def hook(module, args) -> None:
            size = (int(args[0].shape[-2]), int(args[0].shape[-1]))
            if size not in sizes.setdefault(name, []):
                sizes[name].append(size)

        return hook

    hooks = [m.register_forward_pre_hook(record(name)) for name, m in model.named_modules() if isinstance(m, nn.Conv2d)]
    was_training = model.training
    height, width = (resolution, resolution) if isinstance(resolution, int) else resolution
    try:
        model.eval()
        with torch.no_grad():
            model(torch.zeros(1, in_channels, height, width, device=next(model.parameters()).device))
    finally:
        model.train(was_training)
        for h in hooks:
            h.remove()
    return {name: tuple(seen) for name, seen in sizes.items()}


def replace_convs(
    model: nn.Module,
    stand_in: OperatorGraph | Assignment,
    resolution: int | tuple[int, int],
    in_channels: int = 3,
    sizes: InputSizes | None = None,
    kinds: tuple[str, ...] = DEFAULT_REPLACE,
) -> ReplacementReport:
    """Replace, in place, the convs the stand-in fits: an operator tries every one of `kinds`
    (core.data.specs.REPLACE_KINDS), an assignment the layers it names, of any kind (FormatError
    naming any the model does not have); the report lists all convs. The model takes
    [N, in_channels, resolution, resolution]; `sizes`: conv_input_sizes of the model when known
    already. Each operator is tried once per layer shape."""
    sizes = sizes if sizes is not None else conv_input_sizes(model, resolution, in_channels)
    convs = list(_convs(model, sizes, tuple(REPLACE_KINDS) if isinstance(stand_in, Assignment) else kinds))
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
    """The convolutions of a backbone a searched operator stands in for (those of the kinds
    spec.replace names), with how many layers have each shape: all but the stem, whose few
    image channels (3) no grouped operator divides (replace_convs keeps it when the operator
    does not fit)."""
    convs = [(layer, why_not) for _, _, layer, why_not in _backbone_convs(spec, num_classes)]
    return Counter(layer for layer, why_not in convs[1:] if not why_not)


def conv_names(spec: BackboneSpec) -> list[str]:
    """Every convolution of a backbone, as its modules name it (what an assignment names)."""
    return [name for name, *_ in _backbone_convs(spec)]


def conv_shapes(spec: BackboneSpec) -> dict[str, ConvShape]:
    """Every convolution of a backbone by name, with its shape."""
    return {name: layer for name, _, layer, _ in _backbone_convs(spec)}


def _backbone_convs(spec: BackboneSpec, num_classes: int = 10) -> list[tuple[str, nn.Conv2d, ConvShape, str]]:
    model = build_backbone(spec, num_classes, seed=None)
    return list(_convs(model, conv_input_sizes(model, spec.resolution), spec.replace))


def _convs(
    model: nn.Module, sizes: InputSizes, kinds: tuple[str, ...]
) -> Iterator[tuple[str, nn.Conv2d, ConvShape, str]]:
    """Every nn.Conv2d of the model in order, with its shape (at the first input size it is
    called at; 0x0 if never) and why an operator does not stand in for it when it replaces
    `kinds` ("" if it does)."""
    for name, conv in [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Conv2d)]:
        seen = sizes.get(name, ())
        h, w = seen[0] if seen else (0, 0)
        layer = ConvShape(conv.in_channels, conv.out_channels, h, w, conv.kernel_size[0], conv.stride[0])
        listed = ", ".join("x".join(map(str, size)) for size in seen)
        why_not = replaceable(ConvSpec.of_module(conv), kinds) or (
            "not used in the forward pass"
            if not seen
            else f"called at several input sizes, {listed} (a stand-in is built for one)"
            if len(seen) > 1
            else ""
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
    c_out, (h, w) = layer.c_out, layer.operator_size
    if len(shape) != 3 or shape[1:] != (h, w):
        raise LayerMismatch(f"operator output {list(shape)} does not keep the {h}x{w} spatial size")
    c, bias = shape[0], conv.bias is not None
    if c == c_out:
        module, how = ReplacedConv([cls()], "direct", c_out, bias, layer.stride), "direct"
    elif c_out % c == 0:
        m = c_out // c
        module, how = (
            ReplacedConv([cls() for _ in range(m)], "concat", c_out, bias, layer.stride),
            (f"{m} copies concatenated"),
        )
    elif c % c_out == 0:
        module, how = ReplacedConv([cls()], "sum", c_out, bias, layer.stride), f"sum of {c // c_out} channel groups"
    else:
        raise LayerMismatch(f"operator gives {c} channels, the layer needs {c_out} (neither divides the other)")
    notes = [f"input subsampled by {layer.stride} (stride {layer.stride}) to {h}x{w}"] * (layer.stride > 1)
    if layer.kernel == 1:
        notes.append("K=1" if "K" in graph.mentioned_variables() else "its own window (no K to bind to 1)")
    return module, ", ".join([*notes, how])


def _binding_failure(graph: OperatorGraph, layer: ConvShape) -> str:
    """What failed binding the operator to a layer: its window size for a 1x1 layer when the
    operator builds at its own K there but not at K = 1 (a window of one makes it meaningless)."""
    own = graph.bindings.get("K")
    if layer.kernel != 1 or "K" not in graph.mentioned_variables() or own in (None, 1):
        return "binding error"
    try:
        module_class(graph, layer_bindings(graph, replace(layer, kernel=own)))
    except TesseraError:
        return "binding error"
    return f"it is meaningless with a window of one: binding error at K=1 (a 1x1 convolution), not at its own K={own}"


def _layer_class(graph: OperatorGraph, layer: ConvShape) -> tuple | LayerMismatch:
    """(module class, output shape without the batch) of the operator at one layer's sizes, or why not."""
    c_in, (h, w) = layer.c_in, layer.operator_size
    try:
        cls = module_class(graph, layer_bindings(graph, layer))
    except TesseraError as e:
        return LayerMismatch(f"{_binding_failure(graph, layer)}: {e}")
    try:
        with torch.no_grad():
            return cls, tuple(cls()(torch.zeros(1, c_in, h, w)).shape[1:])
    except RuntimeError as e:
        return LayerMismatch(f"operator does not run on [{c_in}, {h}, {w}]: {e}")
