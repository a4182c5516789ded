"""Window products read off a plan: an unfold's windows multiplied element-wise by another
tensor and summed over the window, as involution applies its per-pixel kernel.

Torch has no layer for this, and the per-primitive form materialises the K*K shifted copies
of the input (im2col), multiplies them by the broadcast kernel into a tensor as large again
and sums it, forward, and does as much again backward (col2im): 2.5-3x slower than taking
one window offset at a time. core.codegen.torch_layers writes such a subgraph as one call
of HELPER, a torch.autograd.Function defined in the generated source, which does that and
never materialises a window. Importing this module imports neither torch nor TVM.

A window product is, in order: a source [C.., H, W] (channel axes first, two spatial axes);
one unfold per spatial axis (one or both), in either order, and reshapes of the source's
channel axes (group, split, merge) between or after them; a broadcast `mul` whose output has
the windows' shape (the other operand, the kernel, is repeated over the windows' axes it
lacks); and reduces that sum exactly the window axes, each the only reader of the value
before it."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.primitives import Broadcast, Reduce
from ..ir.primitives.views import Group, Merge, Split, Unfold
from .torch_ops import broadcast_views, ints, view
from .torch_plan import Plan, Step

_RESHAPES = (Group, Split, Merge)


@dataclass(frozen=True)
class WindowProductMatch:
    """A broadcast `mul` of windows and a kernel, with the reduces summing its window axes."""

    product: Step  # the broadcast
    windows_port: int  # the broadcast's input port that reads the windows (1: rhs, 0: lhs)
    views: tuple[Step, ...]  # unfolds and channel reshapes from the source to the windows, in order
    reduces: tuple[Step, ...]  # the reduces summing the window axes, in order
    window: tuple[int, int]  # kh, kw (1 for an axis without a window)
    unfolded: tuple[int, ...]  # the spatial axes unfolded (0: H, 1: W), in the windows' axis order

    @property
    def source(self) -> str:
        """Python name of the tensor whose windows are taken."""
        return self.views[0].args[0]

    @property
    def source_shape(self) -> tuple[int, ...]:
        return self.views[0].in_shapes[0]

    @property
    def result(self) -> str:
        return self.reduces[-1].result

    @property
    def lead_shape(self) -> tuple[int, ...]:
        """The windows' axes before the window axes: the source's channels as the product sees them."""
        return self.product.out_shape[: len(self.product.out_shape) - 2 - len(self.unfolded)]

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(s.node for s in (*self.views, self.product, *self.reduces))


def window_products(plan: Plan) -> dict[str, WindowProductMatch]:
    """Every window product of the plan, by the node of its broadcast."""
    producer = {s.result: s for s in plan.steps}
    found = {}
    for step in plan.steps:
        if isinstance(step.prim, Broadcast) and step.prim.params["fn"] == "mul":
            for port in (1, 0):
                match = _match(plan, producer, step, port)
                if match is not None:
                    found[step.node] = match
                    break
    return found


def _match(plan: Plan, producer: dict[str, Step], product: Step, port: int) -> WindowProductMatch | None:
    if product.in_shapes[port] != product.out_shape or broadcast_views(product)[port] != product.out_shape:
        return None  # the windows must be the operand the other one is repeated over
    views: list[Step] = []
    value = product.args[port]
    while value in producer and isinstance(producer[value].prim, (Unfold, *_RESHAPES)):
        views.insert(0, producer[value])
        value = producer[value].args[0]
    for start in range(len(views)):
        unfolded = _windows(views[start:])
        if unfolded:
            reduces = _reduces(plan, product, len(unfolded))
            if reduces is None:
                return None
            window = [1, 1]
            for step in views[start:]:
                if isinstance(step.prim, Unfold):
                    window[_spatial_axis(step)] = step.out_shape[step.ins[0].spatial_dims[0]]
            return WindowProductMatch(
                product, port, tuple(views[start:]), reduces, (window[0], window[1]), tuple(unfolded)
            )
    return None


def _windows(views: list[Step]) -> list[int]:
    """The spatial axes the views unfold, in order, when they are a source's windows with only
    its channel axes reshaped; [] when they are not."""
    source = views[0].ins[0]
    if len(source.spatial_dims) != 2 or source.channel_dims != list(range(len(source.channel_dims))):
        return []
    channels, unfolded = len(source.channel_dims), []  # the leading axes that hold the source's channels
    for step in views:
        if isinstance(step.prim, Unfold):
            axis = _spatial_axis(step)
            if axis in unfolded:
                return []
            unfolded.append(axis)
        else:
            d = step.prim.axis(step.ins[0])
            if d + isinstance(step.prim, Merge) >= channels:
                return []  # it reshapes a window or a spatial axis
            channels += -1 if isinstance(step.prim, Merge) else 1
    return unfolded


def _spatial_axis(unfold: Step) -> int:
    x = unfold.ins[0]
    return x.spatial_dims.index(unfold.prim.axis(x))


def _reduces(plan: Plan, product: Step, windows: int) -> tuple[Step, ...] | None:
    """The reduces after the product that sum its window axes (the `windows` axes before the
    spatial ones) and nothing else, each the only reader of the value it sums; None if not."""
    rank = len(product.out_shape)
    window_axes = set(range(rank - 2 - windows, rank - 2))
    by_node = {s.node: s for s in plan.steps}
    axes, node = list(range(rank)), product.node
    reduces: list[Step] = []
    while len(reduces) < windows:
        readers = list(plan.graph.g.successors(node))
        step = by_node.get(readers[0]) if len(readers) == 1 else None
        if step is None or not isinstance(step.prim, Reduce):
            return None
        axis = axes.pop(step.prim.axis(step.ins[0]))
        if axis not in window_axes:
            return None
        reduces.append(step)
        node = step.node
    return tuple(reduces)


HELPER_NAME = "WindowProduct"
HELPER = f'''class {HELPER_NAME}(torch.autograd.Function):
    """y[..., h, w] = sum over i < kh, j < kw of a[..., i, j, h, w] * x[..., h + i - kh // 2, w + j - kw // 2]:
    x's kh x kw windows (zeros outside x) times `a`, broadcast against them, summed over the
    window. One window offset at a time: with x's planes flattened and padded, an offset reads
    one contiguous run of them (where a row's end wraps onto the next row, `a` is masked to
    zero), so the kh * kw shifted copies of x are never materialised, forward or backward."""

    @staticmethod
    def forward(ctx, a, x, kh, kw):
        h, w = x.shape[-2:]
        column = torch.arange(w, device=x.device) + torch.arange(kw, device=x.device)[:, None] - kw // 2
        inside = ((column >= 0) & (column < w)).to(a.dtype)[:, None, :]  # [kw, 1, w]: offset j is inside x
        masked = (a * inside).expand(*a.shape[:-4], kh, kw, h, w).reshape(*a.shape[:-4], kh, kw, h * w)
        start = kh // 2 * w + kw // 2  # zeros before x, so that offset (0, 0) reads from 0
        padded = nn.functional.pad(x.flatten(-2), (start, (kh - 1) * w + kw - 1 - start))
        y = masked[..., 0, 0, :] * padded[..., : h * w]
        for i, j, s in {HELPER_NAME}.runs(kh, kw, w)[1:]:
            y.addcmul_(masked[..., i, j, :], padded[..., s : s + h * w])
        ctx.save_for_backward(masked, padded, inside)
        ctx.sizes = (kh, kw, a.shape)
        return y.unflatten(-1, (h, w))

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        masked, padded, inside = ctx.saved_tensors
        kh, kw, a_shape = ctx.sizes
        h, w = grad.shape[-2:]
        grad = grad.reshape(*grad.shape[:-2], h * w)
        grad_a = grad_x = None
        if ctx.needs_input_grad[0]:
            grad_a = torch.empty_like(masked)
            for i, j, s in {HELPER_NAME}.runs(kh, kw, w):
                grad_a[..., i, j, :] = (grad * padded[..., s : s + h * w]).sum_to_size(grad_a[..., i, j, :].shape)
            grad_a = (grad_a.unflatten(-1, (h, w)) * inside).sum_to_size(a_shape)
        if ctx.needs_input_grad[1]:
            grad_padded = torch.zeros_like(padded)
            for i, j, s in {HELPER_NAME}.runs(kh, kw, w):
                grad_padded[..., s : s + h * w].addcmul_(grad, masked[..., i, j, :])
            start = kh // 2 * w + kw // 2
            grad_x = grad_padded[..., start : start + h * w].unflatten(-1, (h, w))
        return grad_a, grad_x, None, None

    @staticmethod
    def runs(kh, kw, w):
        """(i, j, where offset (i, j)'s run starts in the padded planes) for every offset."""
        return [(i, j, i * w + j) for i in range(kh) for j in range(kw)]'''


def window_product(site: WindowProductMatch) -> str:
    """The call of HELPER for a window product: the kernel viewed as [.., kh, kw, H, W] (ones
    where it is repeated), the source as the windows' leading axes and H, W."""
    product, port = site.product, site.windows_port
    kernel, kernel_shape = product.args[1 - port], product.in_shapes[1 - port]
    shape = broadcast_views(product)[1 - port]
    lead, axes = len(site.lead_shape), len(site.unfolded)
    target = [*shape[:lead], *shape[lead : lead + axes], *shape[-2:]]
    if axes == 1:
        target.insert(lead + 1 - site.unfolded[0], 1)  # the axis without a window
    a = view(kernel, kernel_shape, target)
    if site.unfolded == (1, 0):
        a += ".transpose(-4, -3)"  # W's window came first
    x = view(site.source, site.source_shape, (*site.lead_shape, *site.source_shape[-2:]))
    return f"{HELPER_NAME}.apply({a}, {x}, {ints(site.window)})"
