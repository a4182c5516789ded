"""PyTorch module source for people to use, under a docstring giving its shapes, cost, sizes
and origin: by default the shape-generic module (core.codegen.torch_generic: sizes given at
construction as nn.Conv2d's, height and width read from the input), optionally with the
`replace_convs(model, example_input, kinds=...)` helper (core.export.replace_helper) that
swaps it into a user's network; or the module fixed at the export's sizes
(core.codegen.to_torch), for operators that are not shaped like a convolution or on request.

The file imports only torch. Its weights are the module's parameters (`w_<node>`), so
weights saved from Tessera's module with `torch.save(module.state_dict(), path)` load
into it with `load_state_dict`. User text (names, shapes, origin) reaches the file only
through names.docstring_text; the helper is fixed text plus integers and the class name."""

from __future__ import annotations

from core.analysis.summary import summarize
from core.codegen import CodegenError, module_source
from core.codegen.torch_generic import generic_source
from core.codegen.torch_plan import Plan, make_plan
from core.data.specs import DEFAULT_REPLACE

from .errors import ExportError
from .exportable import Exportable
from .names import class_name, docstring_text
from .replace_helper import helper_source


def torch_source(
    item: Exportable,
    replace_helper: bool = False,
    generic: bool | None = None,
    kinds: tuple[str, ...] = DEFAULT_REPLACE,
) -> str:
    """The module's source with a docstring. `generic` (the default where the operator maps
    [C, H, W] to [C', H, W]): a shape-generic module (core.codegen.torch_generic), with
    `replace_helper` replace_convs too (core.export.replace_helper); else a module fixed at
    the export's sizes. `kinds`: the convolutions replace_convs replaces by default."""
    item.require_sizes()
    plan = make_plan(item.graph)
    cls = class_name(item.name)
    shaped = _conv_shaped(item, plan)
    if replace_helper and shaped:
        raise ExportError(f"{item.name}: replace_convs needs {shaped}")
    if generic is None:
        generic = not shaped
    if replace_helper and not generic:
        raise ExportError(f"{item.name}: replace_convs comes with the shape-generic module only (drop --fixed-sizes)")
    if not generic:
        return _docstring(item, plan, cls) + module_source(item.graph, class_name=cls)
    if shaped:
        raise ExportError(f"{item.name}: a shape-generic module needs {shaped}")
    try:
        source = generic_source(item.graph, cls)
    except CodegenError as e:
        raise ExportError(f"{item.name}: {e}") from None
    if replace_helper:
        source = source.replace("import torch\n", "import warnings\n\nimport torch\n", 1)
        source += helper_source(item.graph, cls, kinds)
    return _generic_docstring(item, plan, cls, kinds if replace_helper else None) + source


def _conv_shaped(item: Exportable, plan: Plan) -> str:
    """What an operator lacks to stand in for a convolution, or "" when it maps [C, H, W] to [C', H, W]."""
    graph = item.graph
    if (
        len(plan.input_shape) != 3
        or len(plan.output_shape) != 3
        or graph.spatial != 2
        or plan.input_shape[1:] != plan.output_shape[1:]
    ):
        return (
            f"an operator mapping [C, H, W] to [C', H, W] like a convolution; "
            f"this one maps {list(plan.input_shape)} to {list(plan.output_shape)}"
        )
    return ""


def _cost(graph) -> dict:
    """The operator's cost at its bindings, which the plan was made at (so none is missing)."""
    cost = summarize(graph).numeric_cost
    if cost is None:
        raise ExportError(f"{graph.name or 'the operator'}: its cost cannot be counted at its bindings")
    return cost


def _generic_docstring(item: Exportable, plan: Plan, cls: str, kinds: tuple[str, ...] | None) -> str:
    """The docstring; with `kinds`, replace_convs's usage too (the kinds it replaces by default)."""
    graph = item.graph
    cost = _cost(graph)
    sizes = ", ".join(f"{k}={v}" for k, v in plan.bindings.items()) or "none"
    c_in, h, w = plan.input_shape
    out = plan.output_shape[0]
    kernel = f", kernel_size={plan.bindings['K']}" if "K" in plan.bindings else ""
    weights = [weight for s in plan.steps if (weight := s.weight) is not None]
    lines = [
        f'"""{docstring_text(item.name)}: a neural operator exported by Tessera, as a shape-generic PyTorch module.',
        "",
        f"Shapes:   input [N, {', '.join(map(str, graph.input_shape))}] -> output [N, {', '.join(map(str, graph.output_shape))}]"
        " at any sizes the operator takes:",
        "          the constructor's arguments (as nn.Conv2d's) and the input's height and width; sizes",
        "          that do not divide are refused, naming the nearest values that do",
        f"Exported at: {sizes}",
        f"Cost per sample there: {cost['macs']:,} MACs, {cost['flops']:,} FLOPs; {cost['params']:,} parameters",
        f"Origin:   {docstring_text(item.origin)}; content hash {item.content_hash[:16]}",
        "Weights (state_dict keys): "
        + (", ".join(f"{x.name} [{', '.join(map(str, x.symbolic))}]" for x in weights) or "none"),
        "",
        "Usage:",
        f"    op = {cls}({c_in}, {out}{kernel})  # kaiming-uniform weights, as torch's convolutions",
        f"    y = op(torch.randn(8, {c_in}, {h}, {w}))  # any height and width",
        f"    op2 = {cls}({c_in}, {out}{kernel}, stride=2)  # reads every other row and column, as a strided conv",
    ]
    if kinds:
        lines += [
            f"    report = replace_convs(model, torch.randn(1, 3, 64, 64))  # every {'/'.join(kinds)} conv it takes",
            "    print(report)  # what was replaced, and what was left and why",
            '    replace_convs(model, torch.randn(1, 3, 64, 64), kinds=("standard", "pointwise", "strided"))  # and strided ones',
        ]
    return "\n".join(lines) + '\n"""\n'


def _docstring(item: Exportable, plan: Plan, cls: str) -> str:
    graph = item.graph
    cost = _cost(graph)
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
    return "\n".join(lines) + '\n"""\n'
