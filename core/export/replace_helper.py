"""The `replace_convs(model, example_input, kinds=...)` helper an exported shape-generic
module comes with (core.export.torch_source): fixed text, but for the class name, whether the
operator takes a kernel size, and how a convolution's weights map onto the operator's when
they do one to one (core.codegen.conv_spec.match_conv: the operator is a convolution).

The helper speaks core.data's vocabulary (standard, pointwise, strided convolutions; the
reasons a layer is left) but imports only torch: the file must stand alone."""

from __future__ import annotations

from core.codegen.conv_spec import NotAConvolution, match_conv
from core.data.specs import DEFAULT_REPLACE, REPLACE_KINDS, replace_kinds
from core.ir.graph import OperatorGraph

_HELPER = '''

# -- swapping the operator into a network -------------------------------------------------
OPERATOR = {cls}
TAKES_KERNEL = {takes_kernel}  # False: the operator has its own window and stands in for any odd square kernel
KINDS = {all_kinds}  # KxK of stride 1; 1x1; stride s > 1 (every s-th row and column)


class WithBias(nn.Module):
    """The operator followed by the bias of the convolution it replaced (copied from it)."""

    def __init__(self, operator, bias):
        super().__init__()
        self.operator = operator
        self.bias = nn.Parameter(bias.detach().clone())

    def forward(self, x):
        return self.operator(x) + self.bias.view(1, -1, 1, 1)


class Report:
    """What replace_convs did: `replaced` [(layer, how)], `left` [(layer, why not)]."""

    def __init__(self):
        self.replaced, self.left = [], []

    def __str__(self):
        lines = [f"{{OPERATOR.__name__}}: replaced {{len(self.replaced)}} of {{len(self.replaced) + len(self.left)}} convolutions"]
        lines += [f"  replaced {{name}}: {{how}}" for name, how in self.replaced]
        lines += [f"  left     {{name}}: {{why}}" for name, why in self.left]
        return "\\n".join(lines)


def replace_convs(model, example_input, kinds={kinds}, copy_weights=False, **coefficients):
    """Replace, in place, every nn.Conv2d of `model` of the given `kinds` (some of KINDS) that
    the operator can stand in for, each by its own instance (fresh weights, on the conv's
    device and dtype, in its training mode; a conv's bias is kept). `example_input` is run
    once, in eval mode without gradients, to find the convolutions the model uses. The
    operator is shape-generic, so a conv the model calls at several resolutions is fine.
    `coefficients` (e.g. G=8) are passed to every instance. With `copy_weights`, each
    operator takes the weights of the conv it replaces, where the two compute the same thing
    (the operator is a convolution); elsewhere that is refused. Returns a Report; a
    warning when nothing was replaced."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or isinstance(kinds, str):
        raise ValueError(f"kinds must be some of {{KINDS}}, got {{kinds!r}}")
    if copy_weights and copy_conv_weights is None:
        raise ValueError(
            f"{{OPERATOR.__name__}} is not a convolution: a conv's weights do not map onto its own one to one; "
            "replace without copy_weights (the operator starts from fresh weights)"
        )
    used = set()
    hooks = [conv.register_forward_pre_hook(lambda module, args, name=name: used.add(name))
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
    report = Report()
    for name, conv in [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Conv2d)]:
        why = "not used in the forward pass" if name not in used else _why_not(conv, kinds)
        if not why:
            try:
                operator = _operator(conv, coefficients)
            except ValueError as error:  # a size that does not divide, output channels the operator cannot give
                why = str(error)
        if why:
            report.left.append((name, why))
            continue
        if copy_weights:
            with torch.no_grad():
                copy_conv_weights(operator, conv.weight)
        model.set_submodule(name, operator if conv.bias is None else WithBias(operator, conv.bias))
        stride = conv.stride[0]
        report.replaced.append((name, f"{{conv.in_channels}}->{{conv.out_channels}}, {{conv.kernel_size[0]}}x{{conv.kernel_size[1]}}"
                                      + (f", stride {{stride}} (the operator on the input subsampled by {{stride}})" if stride > 1 else "")))
    if not report.replaced:
        warnings.warn(f"replace_convs replaced no convolution of {{type(model).__name__}}:\\n{{report}}", stacklevel=2)
    return report


def _operator(conv, coefficients):
    sizes = {{"kernel_size": conv.kernel_size[0]}} if TAKES_KERNEL else {{}}
    operator = OPERATOR(conv.in_channels, conv.out_channels, **sizes, stride=conv.stride[0], **coefficients)
    operator.to(device=conv.weight.device, dtype=conv.weight.dtype).train(conv.training)
    return operator


def _why_not(conv, kinds):
    """Why the operator does not stand in for this conv, or "" when it does."""
    (kh, kw), (sh, sw) = conv.kernel_size, conv.stride
    if conv.groups != 1:
        return "depthwise" if conv.groups == conv.in_channels else f"grouped (groups={{conv.groups}})"
    if conv.dilation != (1, 1):
        return f"dilated (dilation {{conv.dilation}})"
    if kh != kw or kh % 2 == 0:
        return f"kernel size {{kh}}x{{kw}} not taken (square and odd only)"
    if conv.padding_mode != "zeros" or conv.padding not in ((kh // 2, kw // 2), "same"):
        return f"padding {{conv.padding}} ({{conv.padding_mode}}) is not zero padding of kernel_size // 2"
    if sh != sw:
        return f"stride {{conv.stride}} differs between rows and columns"
    needed = [kind for kind, needs in (("strided", sh > 1), ("pointwise", kh == 1), ("standard", kh > 1)) if needs]
    missing = [kind for kind in needed if kind not in kinds]
    if missing:
        return f"{{kh}}x{{kw}}{{f', stride {{sh}}' if sh > 1 else ''}}: {{' and '.join(missing)}} convolutions not asked for (kinds={{tuple(kinds)}})"
    return ""
'''

_NO_TRANSFER = """

copy_conv_weights = None  # the operator is not a convolution: no conv's weights map onto it one to one
"""

_SAME_LAYOUT = '''

def copy_conv_weights(operator, weight):
    """Copy an nn.Conv2d's weight [out_channels, in_channels, kh, kw] into the operator, which
    computes that convolution: its {param} holds the same numbers in the same order."""
    operator.{param}.copy_(weight.reshape(operator.{param}.shape))
'''

_TRANSFER = '''

def copy_conv_weights(operator, weight):
    """Copy an nn.Conv2d's weight [out_channels, in_channels, kh, kw] into the operator, which
    computes that convolution: its {param} holds the same numbers in its own layout."""
    out_channels, in_channels, kh, kw = weight.shape  # the conv's
    sizes = {{"g": 1, "out": out_channels, "c": in_channels, "kh": kh, "kw": kw}}
    viewed = weight.reshape([sizes[axis] for axis in {torch_axes}])  # the operator's axes, in torch's order
    operator.{param}.copy_(viewed.permute({inverse}).reshape(operator.{param}.shape))
'''


def helper_source(graph: OperatorGraph, cls: str, kinds: tuple[str, ...] = DEFAULT_REPLACE) -> str:
    """replace_convs and what it uses, for an operator exported as class `cls`; `kinds` (some of
    core.data.specs.REPLACE_KINDS) are the ones it replaces by default."""
    text = _HELPER.format(
        cls=cls,
        takes_kernel="K" in graph.mentioned_variables(),
        kinds=replace_kinds(kinds),
        all_kinds=tuple(REPLACE_KINDS),
    )
    return text + _transfer(graph)


def _transfer(graph: OperatorGraph) -> str:
    """copy_conv_weights when the whole operator is one dense convolution of its input
    channels to its output channels with a K x K window; else its absence, said."""
    try:
        conv = match_conv(graph)
    except NotAConvolution:
        return _NO_TRANSFER
    spec, kernel = conv.spec, graph.bindings.get("K")
    if (
        spec.groups != 1
        or spec.stride != (1, 1)
        or spec.kernel != (kernel, kernel)
        or "K" not in graph.mentioned_variables()
    ):
        return _NO_TRANSFER
    axes = ["out", *conv.weight_order]
    torch_axes: list[str] = [a for a in ("g", "out", "c", "kh", "kw") if a in axes]
    inverse = [torch_axes.index(a) for a in axes]
    if inverse == sorted(inverse):
        return _SAME_LAYOUT.format(param=conv.weight)
    return _TRANSFER.format(param=conv.weight, torch_axes=tuple(torch_axes), inverse=", ".join(map(str, inverse)))
