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
    # what HELPER is given (batch excluded): the kernel as [lead.., kh, kw, H, W] and the source as
    # [lead.., H, W], the axes the kernel is repeated over (involution's channels of a group) as one
    kernel_view: tuple[int, ...]
    source_view: tuple[int, ...]

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
            views_ = _helper_views(product, port, len(unfolded))
            if reduces is None or views_ is None:
                return None
            window = [1, 1]
            for step in views[start:]:
                if isinstance(step.prim, Unfold):
                    window[_spatial_axis(step)] = step.out_shape[step.ins[0].spatial_dims[0]]
            return WindowProductMatch(
                product, port, tuple(views[start:]), reduces, (window[0], window[1]), tuple(unfolded), *views_
            )
    return None


def _helper_views(product: Step, port: int, windows: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(kernel view, source view) as HELPER takes them, the kernel's window axes as they are
    (window_product puts them in order); None when the kernel is repeated over two runs of axes."""
    kernel = broadcast_views(product)[1 - port]
    shape = product.out_shape
    lead = len(shape) - 2 - windows
    kernel_lead: list[int] = []
    source_lead: list[int] = []
    runs = 0
    for i, (k, x) in enumerate(zip(kernel[:lead], shape[:lead])):
        repeated = k == 1 < x
        if repeated and i and kernel[i - 1] == 1 < shape[i - 1]:
            source_lead[-1] *= x  # one more axis of the same run
            continue
        runs += repeated
        kernel_lead.append(k)
        source_lead.append(x)
    if runs > 1:
        return None
    return (*kernel_lead, *kernel[lead:]), (*source_lead, *shape[-2:])


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
    x's kh x kw windows (zeros outside x) times `a`, summed over the window; `a` may hold 1
    where x has an axis of elements that share it (involution's channels of a group), and in
    its window and spatial axes. One window offset at a time: with x's planes flattened and
    padded, an offset reads one contiguous run of them (where a row's end wraps onto the next
    row, `a` is masked to zero), so the kh * kw shifted copies of x are never materialised,
    forward or backward."""

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
            shared = [d for d in range(grad.dim() - 1) if masked.shape[d] < grad.shape[d]]  # [] or one axis
            grad_a, product = torch.empty_like(masked), None
            for i, j, s in {HELPER_NAME}.runs(kh, kw, w):
                run, part = padded[..., s : s + h * w], grad_a[..., i, j, :]
                if not shared:
                    torch.mul(grad, run, out=part)
                elif grad.shape[shared[0]] <= 4:  # a few products added beat a product and a sum
                    d = shared[0]
                    torch.mul(grad.narrow(d, 0, 1), run.narrow(d, 0, 1), out=part)
                    for c in range(1, grad.shape[d]):
                        part.addcmul_(grad.narrow(d, c, 1), run.narrow(d, c, 1))
                else:
                    product = torch.mul(grad, run, out=product)
                    torch.sum(product, shared[0], keepdim=True, out=part)
                if j != kw // 2:
                    part.unflatten(-1, (h, w)).mul_(inside[j])  # no gradient where the run wrapped
            grad_a = grad_a.unflatten(-1, (h, w)).sum_to_size(a_shape)
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
    target = list(site.kernel_view)
    if len(site.unfolded) == 1:
        target.insert(len(target) - 2 - site.unfolded[0], 1)  # the axis without a window
    kernel = view(product.args[1 - port], product.in_shapes[1 - port], target)
    if site.unfolded == (1, 0):
        kernel += ".transpose(-4, -3)"  # W's window came first
    source = view(site.source, site.source_shape, site.source_view)
    call = f"{HELPER_NAME}.apply({kernel}, {source}, {ints(site.window)})"
    return view(call, site.source_view, site.reduces[-1].out_shape)
