"""Per-primitive torch templates: a planned step -> one Python expression.

The expressions follow docs/operators.md's primitives table; the batch axis is axis 0,
so IR axis d is torch axis d + 1. Templates only format integers from the plan,
names the plan made, and fixed text chosen by parameter values."""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from math import prod

from ..ir.primitives import (
    Broadcast,
    Concat,
    ElementWise,
    Expand,
    Fold,
    FullyConnected,
    Group,
    Merge,
    Reduce,
    Share,
    Shift,
    Softmax,
    Split,
    Stride,
    Unfold,
)
from ..ir.primitives.blending import match
from .conv_spec import ConvMatch
from .errors import CodegenError
from .torch_plan import BATCH_NAME, Step

UNARY = {
    "relu": "torch.relu({})",
    "gelu": "nn.functional.gelu({})",
    "sigmoid": "torch.sigmoid({})",
    "tanh": "torch.tanh({})",
    "abs": "torch.abs({})",
    "exp": "torch.exp({})",
    "neg": "torch.neg({})",
    "sin": "torch.sin({})",
    "sqrt": "torch.sqrt(torch.abs({}))",
    "sqr": "torch.square({})",
}
BINARY = {
    "add": "{} + {}",
    "sub": "{} - {}",
    "mul": "{} * {}",
    "min": "torch.minimum({}, {})",
    "max": "torch.maximum({}, {})",
}
_OPERATORS = ("add", "sub", "mul")  # infix results need parentheses before a method call
_LETTERS = [c for c in string.ascii_lowercase + string.ascii_uppercase if c not in "nog"]


def expression(step: Step) -> str:
    try:
        template = TEMPLATES[type(step.prim)]
    except KeyError:
        raise CodegenError(f"{step.prim.op} {step.node}: no torch lowering for this primitive") from None
    return template(step)


def ints(values: Sequence[int | str]) -> str:
    return ", ".join(str(v) for v in values)


def view(name: str, shape: Sequence[int], target: Sequence[int]) -> str:
    """`name` reshaped to [batch, *target], or `name` itself when it already has that shape."""
    if tuple(shape) == tuple(target):
        return name
    return f"{name}.reshape({ints([BATCH_NAME, *target])})"


def _letters(count: int, node: str) -> list[str]:
    if count > len(_LETTERS):
        raise CodegenError(f"{node}: {count} axes are more than einsum can name")
    return _LETTERS[:count]


def _axis(step: Step, name: str = "dim") -> int:
    return step.prim.axis(step.ins[0], name)


def _reshape(step: Step) -> str:
    return view(step.args[0], step.in_shapes[0], step.out_shape)


def _shift(step: Step) -> str:
    return f"torch.roll({step.args[0]}, {step.prim.params['amount']}, {_axis(step) + 1})"


def _expand(step: Step) -> str:
    d = step.prim.params["dim"] % (len(step.ins[0]) + 1)
    return f"{step.args[0]}.unsqueeze({d + 1}).expand({ints([BATCH_NAME, *step.out_shape])})"


def _unfold(step: Step) -> str:
    """Window k of position i reads x[i + k - K//2], zeros outside; the window axis goes before the first spatial axis."""
    d, first = _axis(step), step.ins[0].spatial_dims[0]
    k = step.out_shape[first]
    pad = [0, 0] * (len(step.ins[0]) - 1 - d) + [k // 2, k - 1 - k // 2]
    return f"nn.functional.pad({step.args[0]}, ({ints(pad)})).unfold({d + 1}, {k}, 1).movedim(-1, {first + 1})"


def _stride(step: Step) -> str:
    d = _axis(step)
    s = step.in_shapes[0][d] // step.out_shape[d]
    return f"{step.args[0]}[{', '.join([':'] * (d + 1) + [f'::{s}'])}]"


def _elementwise(step: Step) -> str:
    return UNARY[step.prim.params["fn"]].format(step.args[0])


def _fold(step: Step) -> str:
    method = "mean" if step.prim.params["fn"] == "avg" else "amax"
    return f"{step.args[0]}.{method}({_axis(step) + 1})"


def _reduce(step: Step) -> str:
    return f"{step.args[0]}.sum({_axis(step) + 1})"


def _softmax(step: Step) -> str:
    return f"torch.softmax({step.args[0]}, {_axis(step) + 1})"


def broadcast_views(step: Step) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shapes a broadcast reads LHS and RHS as, so that torch's broadcasting does what
    docs/operators.md's rule says: RHS's middle read as [L, M]; LHS's middle is viewed as RHS's leading
    middle axes (product L) followed by ones, so torch repeats each LHS element over M
    consecutive RHS elements."""
    m = match(*step.ins)
    lhs, rhs = step.in_shapes
    pre, lhs_suf, rhs_mid = rhs[: m.prefix], lhs[m.lhs_suffix_start :], rhs[m.prefix : m.rhs_suffix_start]
    l_size = prod(lhs[m.prefix : m.lhs_suffix_start])
    lead = next((j for j in range(len(rhs_mid) + 1) if prod(rhs_mid[:j]) == l_size), None)
    if lead is None:  # no run of RHS's axes has LHS's size: read RHS's middle as [L, M] explicitly
        rhs_mid, lead = (l_size, prod(rhs_mid) // l_size), 1
    rhs_view = (*pre, *rhs_mid, *rhs[m.rhs_suffix_start :])
    lhs_view = (*pre, *rhs_mid[:lead], *[1] * (len(rhs_mid) - lead), *lhs_suf)
    return lhs_view, rhs_view


def _broadcast(step: Step) -> str:
    (lhs, rhs), (a, b) = step.in_shapes, step.args
    lhs_view, rhs_view = broadcast_views(step)
    fn = step.prim.params["fn"]
    expr = BINARY[fn].format(view(a, lhs, lhs_view), view(b, rhs, rhs_view))
    if rhs_view == tuple(rhs):
        return expr
    return view(f"({expr})" if fn in _OPERATORS else expr, rhs_view, rhs)


def _concat(step: Step) -> str:
    return f"torch.cat(({step.args[0]}, {step.args[1]}), {_axis(step) + 1})"


def _fc(step: Step) -> str:
    """Channel axes flattened in order to P; output o reads input block o // (out / groups)."""
    x, shape = step.ins[0], step.in_shapes[0]
    channels, spatial = x.channel_dims, x.spatial_dims
    src = step.args[0]
    if channels + spatial != list(range(len(x))):
        src = f"{src}.permute({ints([0, *[i + 1 for i in channels + spatial]])})"
        shape = tuple(shape[i] for i in channels + spatial)
    out, p_size = step.out_shape[0], prod(shape[i] for i in range(len(channels)))
    space = shape[len(channels) :]
    weight = step.own_weight()
    groups = p_size // weight.shape[1]
    s = "".join(_letters(len(space), step.node))
    w = f"self.{weight.name}"
    if groups == 1:
        return f'torch.einsum("np{s},op->no{s}", {view(src, shape, (p_size, *space))}, {w})'
    grouped = view(src, shape, (groups, p_size // groups, *space))
    einsum = (
        f'torch.einsum("ngp{s},gop->ngo{s}", {grouped}, {w}.reshape({ints([groups, out // groups, p_size // groups])}))'
    )
    return view(einsum, (groups, out // groups, *space), step.out_shape)


def _share(step: Step) -> str:
    """y[o, idx] = x[idx] * w[o, idx[dims]], then the absorbed reduces: one einsum, no product tensor."""
    x, prim = step.ins[0], step.prim
    assert isinstance(prim, Share)  # TEMPLATES sends only shares here
    axes = _letters(len(x), step.node)
    lead = ["o"] if prim.size("out") is not None else []
    weight = lead + [axes[d] for d in prim.shared_axes(x)]
    result = lead + axes
    for d in step.reduced:
        del result[d]
    return (
        f'torch.einsum("n{"".join(axes)},{"".join(weight)}->n{"".join(result)}", '
        f"{step.args[0]}, self.{step.own_weight().name})"
    )


def conv(site: ConvMatch) -> str:
    """nn.functional.conv2d on the source of the window, with the weight viewed in torch's
    layout [K, C/G, kh, kw]; an even window is padded explicitly (K//2 zeros before, one fewer
    after); group axes kept by a share go back behind the output channels."""
    spec = site.spec
    if isinstance(spec.padding, str):  # an nn.Conv2d's "same"; an operator's padding is numbers
        raise CodegenError(f"a convolution padded {spec.padding!r} has no zeros to add here")
    padding = spec.padding
    src = view(site.source, site.source_shape, site.input_shape)
    options = []
    if any(k % 2 == 0 for k in spec.kernel):
        (kh, kw), (ph, pw) = spec.kernel, padding
        src = f"nn.functional.pad({src}, ({ints([pw, kw - 1 - pw, ph, kh - 1 - ph])}))"
    elif padding != (0, 0):
        options.append(f"padding={_pair(padding)}")
    if spec.stride != (1, 1):
        options.append(f"stride={_pair(spec.stride)}")
    if spec.groups != 1:
        options.append(f"groups={spec.groups}")
    call = f"nn.functional.conv2d({', '.join([src, _conv_weight(site), *options])})"
    if not site.group_axes:
        return call
    out, *_, height, width = site.output_shape
    grouped = f"{call}.reshape({ints([BATCH_NAME, *site.group_axes, out, height, width])})"
    return f"{grouped}.movedim({len(site.group_axes) + 1}, 1)"


def _conv_weight(site: ConvMatch) -> str:
    """The weight parameter viewed as torch's [K, C/G, kh, kw]: reshapes, and a permute only
    where its axes really change order (not where only axes of size 1 move)."""
    spec = site.spec
    shape, order = site.weight_layout()
    torch_shape = (spec.out_channels, spec.in_channels // spec.groups, *spec.kernel)
    weight, now = f"self.{site.weight}", site.weight_shape
    moved = [i for i in order if shape[i] != 1]
    if moved != sorted(moved):
        if now != shape:
            weight += f".reshape({ints(shape)})"
        weight += f".permute({ints(order)})"
        now = tuple(shape[i] for i in order)
    if now != torch_shape:
        weight += f".reshape({ints(torch_shape)})"
    return weight


def windows(unfolds: Sequence[Step]) -> str:
    """Unfolds of one or both spatial axes of a tensor [C.., H, W] as one
    nn.functional.unfold (im2col: windows (c, kh, kw) flattened), viewed as the operator's
    [C.., windows in unfold order, H, W]."""
    shape, last = unfolds[0].in_shapes[0], unfolds[-1]
    (h, w), c = shape[-2:], prod(shape[:-2])
    kernel = [1, 1]
    for step in unfolds:
        kernel[unfolded_axis(step)] = step.out_shape[step.ins[0].spatial_dims[0]]
    (kh, kw), src = kernel, view(unfolds[0].args[0], shape, (c, h, w))
    if kh % 2 and kw % 2:
        padding = f", padding={_pair((kh // 2, kw // 2))}" if (kh, kw) != (1, 1) else ""
    else:  # an even window: K//2 zeros before, one fewer after
        src, padding = f"nn.functional.pad({src}, ({ints([kw // 2, kw - 1 - kw // 2, kh // 2, kh - 1 - kh // 2])}))", ""
    call = f"nn.functional.unfold({src}, {_pair((kh, kw))}{padding})"
    if [unfolded_axis(s) for s in unfolds] != [1, 0]:
        return view(call, (c * kh * kw, h * w), last.out_shape)
    *channels, _, _, _, _ = last.out_shape  # W was unfolded first: its window comes first
    return f"{view(call, (c * kh * kw, h * w), (*channels, kh, kw, h, w))}.transpose({len(channels) + 1}, {len(channels) + 2})"


def unfolded_axis(step: Step) -> int:
    """The spatial axis an unfold opens a window on: 0 for H, 1 for W."""
    x = step.ins[0]
    return x.spatial_dims.index(step.prim.axis(x))


def _pair(values: tuple[int, int]) -> str:
    return str(values[0]) if values[0] == values[1] else f"({ints(values)})"


TEMPLATES: dict[type, Callable[[Step], str]] = {
    Group: _reshape,
    Split: _reshape,
    Merge: _reshape,
    Shift: _shift,
    Expand: _expand,
    Unfold: _unfold,
    Stride: _stride,
    ElementWise: _elementwise,
    Fold: _fold,
    Reduce: _reduce,
    Softmax: _softmax,
    Broadcast: _broadcast,
    Concat: _concat,
    FullyConnected: _fc,
    Share: _share,
}
