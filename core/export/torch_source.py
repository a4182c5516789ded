"""PyTorch module source for people to use: the generated module (core.codegen.to_torch)
under a docstring giving its shapes, cost, sizes and origin, and optionally a
`replace_convs(model, example_input)` helper that swaps it into a user's network.

The file imports only torch. Its weights are the module's parameters (`w_<node>`), so
weights saved from Tessera's module with `torch.save(module.state_dict(), path)` load
into it with `load_state_dict`. User text (names, shapes, origin) reaches the file only
through names.docstring_text; the helper is fixed text plus integers and the class name."""

from __future__ import annotations

from core.analysis.summary import summarize
from core.codegen import module_source
from core.codegen.torch_plan import Plan, make_plan

from .errors import ExportError
from .exportable import Exportable
from .names import class_name, docstring_text

_REPLACE_HELPER = '''

# -- swapping the operator into a network -------------------------------------------------
OPERATOR = {cls}
IN_CHANNELS, OUT_CHANNELS, HEIGHT, WIDTH = {c_in}, {c_out}, {height}, {width}
KERNEL = {kernel}  # None: the operator has no kernel size, so any odd square kernel matches


class WithBias(nn.Module):
    """The operator followed by the bias of the convolution it replaced (copied from it)."""

    def __init__(self, operator, bias):
        super().__init__()
        self.operator = operator
        self.bias = nn.Parameter(bias.detach().clone())

    def forward(self, x):
        return self.operator(x) + self.bias.view(1, -1, 1, 1)


def replace_convs(model, example_input):
    """Replace, in place, every nn.Conv2d of `model` that this operator can stand in for:
    IN_CHANNELS -> OUT_CHANNELS channels on a HEIGHT x WIDTH input (seen while running
    `model(example_input)` once in eval mode), groups 1, stride 1, dilation 1, zero "same"
    padding and a KERNEL x KERNEL kernel. Each replaced layer gets its own operator
    (fresh weights) on the conv's device and dtype; a conv's bias is kept.
    Returns the names of the replaced layers."""
    inputs = {{}}

    def recorder(name):
        def hook(module, args):
            inputs.setdefault(name, tuple(args[0].shape[1:]))
        return hook

    hooks = [conv.register_forward_pre_hook(recorder(name))
             for name, conv in model.named_modules() if isinstance(conv, nn.Conv2d)]
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            model(example_input)
    finally:
        model.train(was_training)
        for hook in hooks:
            hook.remove()
    replaced = []
    for name, conv in list(model.named_modules()):
        if (isinstance(conv, nn.Conv2d) and inputs.get(name) == (IN_CHANNELS, HEIGHT, WIDTH)
                and _replaceable(conv)):
            operator = OPERATOR().to(device=conv.weight.device, dtype=conv.weight.dtype)
            operator.train(conv.training)
            model.set_submodule(name, operator if conv.bias is None else WithBias(operator, conv.bias))
            replaced.append(name)
    return replaced


def _replaceable(conv):
    k = conv.kernel_size
    return (conv.out_channels == OUT_CHANNELS and conv.groups == 1 and conv.stride == (1, 1)
            and conv.dilation == (1, 1) and conv.padding_mode == "zeros" and k[0] == k[1] and k[0] % 2 == 1
            and conv.padding in ((k[0] // 2, k[1] // 2), "same") and KERNEL in (None, k[0]))
'''


def torch_source(item: Exportable, replace_helper: bool = False) -> str:
    """The module's source with a docstring; with `replace_helper`, replace_convs too
    (for operators mapping [C, H, W] to [C', H, W])."""
    item.require_sizes()
    plan = make_plan(item.graph)
    cls = class_name(item.name)
    source = _docstring(item, plan, cls, replace_helper) + module_source(item.graph, class_name=cls)
    if replace_helper:
        source += _helper(item, plan, cls)
    return source


def _docstring(item: Exportable, plan: Plan, cls: str, replace_helper: bool) -> str:
    graph = item.graph
    cost = summarize(graph).numeric_cost
    template = docstring_text(f"{graph.input_type()} -> [{', '.join(graph.output_shape)}]")
    sizes = ", ".join(f"{k}={v}" for k, v in plan.bindings.items()) or "none"
    weights = [s.weight for s in plan.steps if s.weight is not None]
    lines = [
        f'"""{docstring_text(item.name)}: a neural operator exported by Tessera, as a PyTorch module.',
        "",
        f"Shapes:   input [N, {', '.join(map(str, plan.input_shape))}] -> "
        f"output [N, {', '.join(map(str, plan.output_shape))}]   (template {template})",
        f"Sizes:    {sizes}",
        f"Cost per sample: {cost['macs']:,} MACs, {cost['flops']:,} FLOPs; {cost['params']:,} parameters",
        f"Origin:   {docstring_text(item.origin)}; content hash {item.content_hash[:16]}",
        "Weights (state_dict keys): " + (", ".join(f"{w.name} {list(w.shape)}" for w in weights) or "none"),
        "",
        "Usage:",
        f"    op = {cls}()  # kaiming-uniform weights, as torch's convolutions",
        '    op.load_state_dict(torch.load("weights.pt"))  # weights saved from Tessera\'s module, if any',
        f"    y = op(torch.randn(8, {', '.join(map(str, plan.input_shape))}))",
    ]
    if replace_helper:
        lines.append("    replace_convs(model, torch.randn(1, 3, 224, 224))  # swap it into a network")
    return "\n".join(lines) + '\n"""\n'


def _helper(item: Exportable, plan: Plan, cls: str) -> str:
    graph = item.graph
    if (
        len(plan.input_shape) != 3
        or len(plan.output_shape) != 3
        or graph.spatial != 2
        or plan.input_shape[1:] != plan.output_shape[1:]
    ):
        raise ExportError(
            f"{item.name}: replace_convs needs an operator mapping [C, H, W] to [C', H, W] "
            f"like a convolution; this one maps {list(plan.input_shape)} to {list(plan.output_shape)}"
        )
    c_in, height, width = plan.input_shape
    kernel = plan.bindings.get("K")
    return _REPLACE_HELPER.format(
        cls=cls,
        c_in=c_in,
        c_out=plan.output_shape[0],
        height=height,
        width=width,
        kernel=kernel if kernel is not None else "None",
    )
