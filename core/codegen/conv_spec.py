"""Convolutions described the way torch describes them, read off an operator's graph.

One description (ConvSpec: channels, kernel, stride, padding, groups, dilation) and one
matcher serve every place where Tessera meets a convolution: running a whole operator
with a convolution algorithm such as GSPC (match_conv) or as a depthwise then a pointwise
convolution (match_separable: two such chains, one after the other), generating torch's own
nn.functional.conv2d for the parts of an operator that are convolutions (conv_sites,
used by core.codegen.torch_layers), and naming a backbone layer's kernel (ConvSpec.describe).
Importing this module imports neither torch nor TVM.

A convolution is a chain of steps from a source tensor [C.., H, W] (channel axes first,
then the two spatial axes; several channel axes count as their product): at most one
unfold per spatial axis (the window; zero padding K//2 before, as docs/operators.md's unfold),
strides on spatial axes after their unfold, one contraction over all channel axes --
fc(out, groups) with groups dividing C (grouped conv), or a share over every channel axis
with reduces over the same axes (standard conv) -- and strides on spatial axes after it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from math import prod

import numpy as np

from ..analysis.shapes import label
from ..ir.graph import INPUT, OperatorGraph
from ..ir.primitives import FullyConnected, Share
from ..ir.primitives.views import Group, Merge, Split, Stride, Unfold
from .errors import CodegenError
from .torch_plan import Plan, Step, make_plan


class NotAConvolution(CodegenError):
    """The operator (or a part of it) is not a 2-D convolution; the message names the node that says so."""


@dataclass(frozen=True)
class ConvSpec:
    """A 2-D convolution with torch's parameters. `padding` is the zeros added before each
    spatial axis (an operator adds after it what its output size needs: K - 1 - K//2)
    or a string such as "same" as an nn.Conv2d may hold it."""

    in_channels: int
    out_channels: int
    kernel: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] | str = (0, 0)
    groups: int = 1
    dilation: tuple[int, int] = (1, 1)
    padding_mode: str = "zeros"

    @classmethod
    def of_module(cls, conv) -> ConvSpec:
        """The spec of an nn.Conv2d (read by attribute, so torch is not imported here)."""
        return cls(
            conv.in_channels,
            conv.out_channels,
            tuple(conv.kernel_size),
            tuple(conv.stride),
            conv.padding if isinstance(conv.padding, str) else tuple(conv.padding),
            conv.groups,
            tuple(conv.dilation),
            conv.padding_mode,
        )

    def why_not_standard(self) -> str:
        """Why this is not a standard conv (groups 1, stride 1, dilation 1, a square odd kernel,
        zero "same" padding), or "" when it is one."""
        kh, kw = self.kernel
        if self.groups != 1:
            return "depthwise conv" if self.groups == self.in_channels else f"grouped conv (groups={self.groups})"
        if self.stride != (1, 1):
            return f"stride {self.stride[0] if self.stride[0] == self.stride[1] else self.stride}"
        if self.dilation != (1, 1):
            return f"dilation {self.dilation}"
        if kh != kw or kh % 2 == 0:
            return f"kernel {kh}x{kw} is not square and odd"
        if self.padding != (kh // 2, kw // 2) or self.padding_mode != "zeros":
            return f"padding {self.padding} ({self.padding_mode}) is not zero 'same' padding"
        return ""

    def describe(self) -> str:
        """E.g. 'conv 64->64, 3x3, stride 1, padding 1, groups 4'."""

        def pair(p) -> str:
            return str(p[0]) if isinstance(p, tuple) and p[0] == p[1] else str(p)

        return (
            f"conv {self.in_channels}->{self.out_channels}, {self.kernel[0]}x{self.kernel[1]}, "
            f"stride {pair(self.stride)}, padding {pair(self.padding)}, groups {self.groups}"
        )


@dataclass(frozen=True)
class ConvMatch:
    """A chain of an operator's steps recognised as a convolution at concrete sizes (batch excluded)."""

    spec: ConvSpec
    input_shape: tuple[int, int, int]  # C, H, W (the source's channel axes flattened)
    output_shape: tuple[int, ...]  # K, Ho, Wo; or out, the group axes, Ho, Wo (see group_axes)
    weight: str  # the torch module's parameter holding the weights
    weight_shape: tuple[int, ...]  # its shape in the operator's layout
    weight_order: tuple[str, ...]  # what the axes after the output axis of that weight hold: "g", "c", "kh", "kw"
    source: str  # Python name of the value the convolution reads (see core.codegen.torch_plan)
    source_shape: tuple[int, ...]  # its shape: channel axes, then H and W
    result: str  # Python name of the value it produces
    nodes: tuple[str, ...]  # the nodes it covers, in order: views before, contraction, strides after
    # A share that keeps the source's leading channel axes (its reduces sum the others) is a
    # grouped conv whose groups are those axes; its output puts them after the output
    # channels ([out, *group_axes, Ho, Wo]) where torch puts them before ([G * out, Ho, Wo]).
    group_axes: tuple[int, ...] = ()

    def weight_layout(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(shape, order): the weight reshaped to `shape` (the output axis, then the sizes in
        weight_order), its axes taken in `order` and reshaped to [K, C/G, kh, kw] is torch's."""
        spec = self.spec
        groups = prod(self.group_axes)
        sizes = {"g": groups, "c": spec.in_channels // spec.groups, "kh": spec.kernel[0], "kw": spec.kernel[1]}
        shape = (spec.out_channels // groups, *(sizes[axis] for axis in self.weight_order))
        axes = ["out", *self.weight_order]
        return shape, tuple(axes.index(a) for a in ("g", "out", "c", "kh", "kw") if a in axes)

    def torch_weight(self, w: np.ndarray) -> np.ndarray:
        """The operator's weight in torch's layout [K, C/G, kh, kw]."""
        shape, order = self.weight_layout()
        spec = self.spec
        torch_shape = (spec.out_channels, spec.in_channels // spec.groups, *spec.kernel)
        return np.ascontiguousarray(np.asarray(w).reshape(shape).transpose(order).reshape(torch_shape))


_ROLES = ("c", "kh", "kw")


def match_conv(graph: OperatorGraph, bindings: Mapping[str, int] | None = None) -> ConvMatch:
    """Read the whole operator as one 2-D convolution at these sizes, or NotAConvolution naming why not."""
    plan = make_plan(graph, bindings)
    name = graph.name or "operator"
    linked = _linked(plan, name)
    first = next(linked)
    chain = _Chain(plan, name, first)
    for step in itertools.chain([first], linked):
        chain.add(step)
    conv = chain.match()
    if conv.group_axes:
        raise _fail(name, f"its output {list(conv.output_shape)} keeps group axes after the output channels")
    return conv


@dataclass(frozen=True)
class SeparableMatch:
    """An operator read as a depthwise convolution (one window per channel) followed by a
    pointwise one (1x1, stride 1, one group), as MobileNet's blocks are."""

    depthwise: ConvMatch
    pointwise: ConvMatch


SEPARABLE = "a depthwise convolution followed by a pointwise one"


def match_separable(graph: OperatorGraph, bindings: Mapping[str, int] | None = None) -> SeparableMatch:
    """Read the whole operator as a depthwise then a pointwise convolution at these sizes
    (the steps up to the first contraction and the strides right after it are the depthwise
    one, the rest the pointwise one), or NotAConvolution naming why not."""
    plan = make_plan(graph, bindings)
    name = graph.name or "operator"
    steps = list(_linked(plan, name, SEPARABLE))
    contractions = [i for i, step in enumerate(steps) if isinstance(step.prim, (FullyConnected, Share))]
    if len(contractions) != 2:
        raise _fail(name, f"it has {len(contractions)} fc or share contractions, not two", SEPARABLE)
    cut = contractions[0] + 1
    while isinstance(steps[cut].prim, Stride):
        cut += 1
    depthwise = _Chain(plan, name, steps[0], SEPARABLE).match(steps[:cut])
    pointwise = _Chain(plan, name, steps[cut], SEPARABLE).match(steps[cut:])
    d, p = depthwise.spec, pointwise.spec
    first, second = (label(graph, conv.nodes[-1]) for conv in (depthwise, pointwise))
    if depthwise.group_axes or not d.groups == d.in_channels == d.out_channels:
        raise _fail(name, f"{first} is a {d.describe()}, not depthwise (one window per channel)", SEPARABLE)
    if pointwise.group_axes or p.kernel != (1, 1) or p.stride != (1, 1) or p.groups != 1:
        raise _fail(name, f"{second} is a {p.describe()}, not pointwise (1x1, stride 1, groups 1)", SEPARABLE)
    return SeparableMatch(depthwise, pointwise)


def _linked(plan: Plan, name: str, what: str = "a 2-D convolution") -> Iterator[Step]:
    """The plan's steps, each once it is known to read just the step before it (the first:
    the input, which is [C, H, W] with two spatial axes), else NotAConvolution naming it."""
    graph = plan.graph
    if len(plan.input_shape) != 3 or graph.spatial != 2:
        raise _fail(name, f"its input {graph.input_type()} is not [C, H, W] with two spatial axes", what)
    if not plan.steps:
        raise _fail(name, "it has no fc or share contracting the channels", what)
    previous = INPUT
    for step in plan.steps:
        if list(graph.inputs_of(step.node)) != [previous]:
            raise _fail(
                name,
                f"{label(graph, step.node)} does not read just the step before it; a convolution is one "
                "chain from the input to the output",
                what,
            )
        yield step
        previous = [step.node, *step.absorbed][-1]


def conv_sites(plan: Plan) -> dict[str, ConvMatch]:
    """Every contraction of the plan that is a convolution, by its node: read from as far
    back through the unfolds, strides and channel reshapes before it as they still form one
    (the views may feed other steps too), and with the strides after it that only it feeds."""
    producer = {[s.node, *s.absorbed][-1]: s for s in plan.steps}
    name = plan.graph.name or "operator"
    sites: dict[str, ConvMatch] = {}
    for step in plan.steps:
        if not isinstance(step.prim, (FullyConnected, Share)):
            continue
        taken = {node for site in sites.values() for node in site.nodes}  # a stride after an earlier one
        views, after = _views_before(plan, step, producer, taken), _strides_after(plan, step, producer)
        for start in range(len(views) + 1):
            chain = [*views[start:], step, *after]
            try:
                sites[step.node] = _Chain(plan, name, chain[0]).match(chain)
                break
            except NotAConvolution:
                continue
    return sites


_VIEWS = (Unfold, Stride, Group, Split, Merge)


def _views_before(plan: Plan, step: Step, producer: dict[str, Step], taken: set[str]) -> list[Step]:
    """The views the contraction reads through, earliest first, up to one `taken` by an earlier convolution."""
    graph, views = plan.graph, list[Step]()
    node = graph.sources(step.node)[0]
    while node in producer and isinstance(producer[node].prim, _VIEWS) and producer[node].node not in taken:
        views.insert(0, producer[node])
        node = graph.sources(node)[0]
    return views


def _strides_after(plan: Plan, step: Step, producer: dict[str, Step]) -> list[Step]:
    """The strides of spatial axes after the contraction, each the only reader of the value before it."""
    graph, strides = plan.graph, list[Step]()
    node = [step.node, *step.absorbed][-1]
    while True:
        readers = list(graph.g.successors(node))
        stride = producer.get(readers[0]) if len(readers) == 1 else None
        if stride is None or not isinstance(stride.prim, Stride):
            return strides
        if stride.prim.axis(stride.ins[0]) not in stride.ins[0].spatial_dims:
            return strides
        strides.append(stride)
        node = stride.node


def _fail(name: str, reason: str, what: str = "a 2-D convolution") -> NotAConvolution:
    return NotAConvolution(f"{name} is not {what}: {reason}")


class _Chain:
    """Reads a chain of steps (views, one contraction, strides) as one convolution; steps
    are added one by one from the first, so the first that does not fit is the one named."""

    def __init__(self, plan: Plan, name: str, first: Step, what: str = "a 2-D convolution"):
        self.plan, self.graph, self.name, self.what = plan, plan.graph, name, what
        self.kernel, self.stride = [1, 1], [1, 1]
        self.unfolded: list[int] = []  # spatial axes (0: H, 1: W) in the order they were unfolded
        self.contraction: Step | None = None
        self.steps: list[Step] = []
        source = first.ins[0]
        if len(source.spatial_dims) != 2 or source.channel_dims != list(range(len(source.channel_dims))):
            raise self.fail(
                f"{label(self.graph, first.node)} reads {source}, not channel axes followed by two spatial axes"
            )
        self.sources = len(source.channel_dims)  # the leading channel axes that hold the source's channels

    def fail(self, reason: str) -> NotAConvolution:
        return _fail(self.name, reason, self.what)

    def add(self, step: Step) -> None:
        self._step(step, label(self.graph, step.node))
        self.steps.append(step)

    def match(self, steps: list[Step] | tuple[Step, ...] = ()) -> ConvMatch:
        for step in steps:
            self.add(step)
        if self.contraction is None:
            raise self.fail("it has no fc or share contracting the channels")
        return self._result(self.steps, self.contraction)

    def _step(self, step: Step, where: str) -> None:
        prim, x = step.prim, step.ins[0]
        if isinstance(prim, Unfold):
            axis = self._spatial_axis(x, prim.axis(x), where)
            if self.contraction is not None or axis in self.unfolded or self.stride[axis] != 1:
                raise self.fail(
                    f"{where} unfolds a window after the contraction, a second window, or a "
                    "strided axis (a dilated window)"
                )
            self.unfolded.append(axis)
            self.kernel[axis] = step.out_shape[x.spatial_dims[0]]  # the window axis, before the spatial ones
        elif isinstance(prim, Stride):
            d = prim.axis(x)
            self.stride[self._spatial_axis(x, d, where)] *= step.in_shapes[0][d] // step.out_shape[d]
        elif isinstance(prim, (Group, Split, Merge)) and self.contraction is None:
            d = prim.axis(x)
            if d + isinstance(prim, Merge) >= self.sources:
                raise self.fail(f"{where} reshapes a window or a spatial axis, not the input's channels")
            self.sources += -1 if isinstance(prim, Merge) else 1
        elif isinstance(prim, (FullyConnected, Share)):
            if self.contraction is not None:
                raise self.fail(f"{where} is a second contraction, after {label(self.graph, self.contraction.node)}")
            self.contraction = step
        else:
            raise self.fail(f"{where} is not part of a convolution")

    def _spatial_axis(self, x, d: int, where: str) -> int:
        if d not in x.spatial_dims:
            raise self.fail(f"{where} acts on channel axis {d} of {x}, not on H or W")
        return x.spatial_dims.index(d)

    def _result(self, chain, step: Step) -> ConvMatch:
        """The convolution the chain computes, `step` its contraction."""
        source_shape = chain[0].in_shapes[0]
        c, (h, w) = prod(source_shape[:-2]), source_shape[-2:]
        sources = self.sources
        x = step.ins[0]
        channels = x.channel_dims  # [the source's channel axes, then the windows in unfold order]
        where = label(self.graph, step.node)
        if len(channels) != sources + len(self.unfolded):
            raise self.fail(f"{where} contracts {x}, not the input channels and the windows")
        roles = ["c"] * sources + [_ROLES[1 + axis] for axis in self.unfolded]  # what each channel axis holds
        group_axes: tuple[int, ...] = ()
        prim = step.prim
        if isinstance(prim, FullyConnected):
            out, block = step.own_weight().shape
            groups = prod(step.in_shapes[0][a] for a in channels) // block
            if c % groups:
                raise self.fail(
                    f"{where} has {groups} groups, which do not divide the {c} input channels "
                    "(its blocks cut through the kernel window)"
                )
            order = roles  # the weight's columns flatten the channel axes in order
        else:
            out, kept = self._share_channels(step, channels, sources, where)
            group_axes = tuple(step.in_shapes[0][a] for a in kept)
            groups = prod(group_axes)
            roles[: len(kept)] = ["g"] * len(kept)
            assert isinstance(prim, Share)  # the other contraction
            shared = prim.shared_axes(x)
            at = [shared.index(a) for a in channels[:sources]]
            if at and at != list(range(at[0], at[0] + sources)):
                raise self.fail(f"{where} does not share the source's channel axes side by side and in order")
            order = [roles[channels.index(a)] for a in shared]
            out *= groups
        order = [
            r for i, r in enumerate(order) if r not in ("g", "c") or i == order.index(r)
        ]  # g and c as one axis each
        order += [role for role in _ROLES if role not in order]  # an axis without a window: size 1
        spec = ConvSpec(
            c,
            out,
            (self.kernel[0], self.kernel[1]),
            (self.stride[0], self.stride[1]),
            (self.kernel[0] // 2, self.kernel[1] // 2),
            groups,
        )
        last = chain[-1]
        return ConvMatch(
            spec,
            (c, h, w),
            tuple(last.out_shape),
            step.own_weight().name,
            step.own_weight().shape,
            tuple(order),
            chain[0].args[0],
            tuple(source_shape),
            last.result,
            tuple(s.node for s in chain),
            group_axes,
        )

    def _share_channels(self, step: Step, channels: list[int], sources: int, where: str) -> tuple[int, list[int]]:
        """A share is a convolution when it shares every channel axis, adds the output channels,
        and its reduces remove every window and the source's channel axes but perhaps its
        leading ones (the groups); -> (the output channels, the axes kept)."""
        x, prim = step.ins[0], step.prim
        assert isinstance(prim, Share)  # _result asks of shares only
        out = step.own_weight().shape[0] if prim.size("out") is not None else None
        axes = ["out", *range(len(x))]  # the share's output axes, named by the input axis they hold
        removed = [axes.pop(d) for d in step.reduced]
        kept = [a for a in channels if a not in removed]
        if (
            out is None
            or sorted(prim.shared_axes(x)) != channels
            or not set(removed) <= set(channels)
            or kept != list(range(len(kept)))
            or len(kept) > sources
        ):
            raise self.fail(
                f"{where} with its reduces is not a contraction of the channel axes and windows into new output channels"
            )
        return out, kept
