"""The forward pass as lines of torch: torch's own layers where part of the plan is one,
the per-primitive templates of core.codegen.torch_ops elsewhere.

Training speed is the point. A contraction that reads its input through unfolds and
strides and forms a convolution (core.codegen.conv_spec.conv_sites: standard, grouped,
depthwise, KxK, Kx1, 1x1 pointwise) becomes one nn.functional.conv2d on the tensor
before its window, so oneDNN convolves instead of an einsum over an unfolded view (2-9x
slower forward and backward), and the views only it read are left out. Windows multiplied
by a kernel and summed over the window (core.codegen.window_product, involution's form)
become one call of a helper that never materialises the windows. A chain of views, shares
and reduces that would materialise a product larger than its input and output becomes one
einsum, staged as core.analysis.staging plans (core.codegen.einsum_chain). Reduces in a row
become one sum over all their axes. Every line still names the nodes it stands for."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.primitives import Reduce, Unfold
from .conv_spec import ConvMatch, conv_sites
from .einsum_chain import EinsumChain, einsum_chains
from .einsum_chain import lines as einsum_lines
from .sym_sizes import operator_names
from .torch_ops import conv, expression, ints, unfolded_axis, windows
from .torch_plan import Plan, Step
from .window_product import HELPER, WindowProductMatch, window_product, window_products


@dataclass(frozen=True)
class Line:
    """`result = expression  # comment` in forward."""

    result: str
    expression: str
    comment: str
    reads: tuple[str, ...]  # the values the expression reads
    helpers: tuple[str, ...] = ()  # source of the definitions the expression calls (module level)


def forward_lines(plan: Plan, layers: bool = True) -> list[Line]:
    """One line per step, or (with `layers`) per recognised layer and per run of reduces;
    lines whose value nothing reads any more are left out."""
    sites = conv_sites(plan) if layers else {}
    products = window_products(plan) if layers else {}
    chains = einsum_chains(plan, _layer_nodes(sites, products)) if layers else {}
    chained = {s.node for chain in chains.values() for s in chain.steps}
    sites = {node: site for node, site in sites.items() if not chained & set(site.nodes)}
    after = {n for node, site in sites.items() for n in site.nodes[site.nodes.index(node) + 1 :]}
    after |= {r.node for site in products.values() for r in site.reduces} | chained
    steps = {s.result: s for s in plan.steps}
    sums: dict[str, _Sum] = {}
    lines: list[Line] = []
    for step in plan.steps:
        if step.node in chains:
            lines += _einsum_lines(chains[step.node])
        elif step.node in sites:
            lines.append(_conv_line(sites[step.node], plan))
        elif step.node in products:
            lines.append(_window_product_line(products[step.node]))
        elif step.node in after:
            continue  # a stride after a convolution, a reduce of a window product, a step of a chain: part of that line
        elif layers and isinstance(step.prim, Reduce):
            lines.append(_sum_line(step, plan, steps, sums))
        elif layers and isinstance(step.prim, Unfold) and _windowable(step):
            lines.append(_windows_line(step, plan, steps))
        else:
            lines.append(Line(step.result, expression(step), _describe(step), step.args))
    return _live(lines, plan.result)


def _layer_nodes(sites: dict[str, ConvMatch], products: dict[str, WindowProductMatch]) -> set[str]:
    """The nodes that convolutions with a window and window products stand for: oneDNN
    convolves and the helper multiplies windows faster than an einsum reads them. A 1x1
    convolution is a contraction like any other, which an einsum chain may take in."""
    taken = {n for site in sites.values() if site.spec.kernel != (1, 1) for n in site.nodes}
    for site in products.values():
        taken |= {s.node for s in (*site.views, site.product, *site.reduces)}
    return taken


def _einsum_lines(chain: EinsumChain) -> list[Line]:
    """The chain's einsum, after its first stage where core.analysis.staging plans one."""
    covered = ", ".join(_nodes(s) for s in chain.steps)
    written = einsum_lines(chain)
    lines, reads = [], chain.source
    for i, (result, einsum) in enumerate(written):
        last = i == len(written) - 1
        comment = (
            f"einsum = {covered}: {chain.steps[-1].out}" if last else f"first stage of the einsum below: {covered}"
        )
        lines.append(Line(result, einsum, comment, (reads,)))
        reads = result
    return lines


def _describe(step: Step) -> str:
    """What a line stands for, e.g. "share 'share' + reduce 'sum_cin': [C_out, K, K, H, W]"."""
    return f"{_nodes(step)}: {step.out}"


def _nodes(step: Step) -> str:
    what = f"{step.prim.op} {step.node!a}"
    if step.absorbed:
        what += " + reduce " + ", ".join(ascii(r) for r in step.absorbed)
    return what


def _conv_line(site: ConvMatch, plan: Plan) -> Line:
    steps = {s.node: s for s in plan.steps}
    covered = ", ".join(_nodes(steps[n]) for n in site.nodes)
    out = steps[site.nodes[-1]].out
    with operator_names():
        described = site.spec.describe()
    return Line(site.result, conv(site), f"{described} = {covered}: {out}", (site.source,))


def _window_product_line(site: WindowProductMatch) -> Line:
    covered = ", ".join(_nodes(s) for s in (*site.views, site.product, *site.reduces))
    product = site.product
    reads = (site.source, product.args[1 - site.windows_port])
    return Line(
        site.result, window_product(site), f"window product = {covered}: {site.reduces[-1].out}", reads, (HELPER,)
    )


def _windowable(step: Step) -> bool:
    """An unfold of a tensor whose channel axes come first and which has two spatial axes."""
    x = step.ins[0]
    return len(x.spatial_dims) == 2 and x.channel_dims == list(range(len(x.channel_dims)))


def _windows_line(step: Step, plan: Plan, steps: dict[str, Step]) -> Line:
    """nn.functional.unfold (im2col, a contiguous tensor whose backward is one col2im) instead of
    views of a padded tensor, which elementwise ops and their gradients read slowly; an unfold
    of the other spatial axis of an unfold's value that nothing else reads joins it."""
    first = steps.get(step.args[0])
    if (
        first is not None
        and isinstance(first.prim, Unfold)
        and _windowable(first)
        and len(list(plan.graph.g.successors(first.node))) == 1
        and unfolded_axis(first) != unfolded_axis(step)
    ):
        chain = [first, step]
    else:
        chain = [step]
    nodes = ", ".join(f"unfold {s.node!a}" for s in chain)
    return Line(step.result, windows(chain), f"{nodes}: {step.out}", (chain[0].args[0],))


@dataclass(frozen=True)
class _Sum:
    """Reduces in a row: the value they sum, its rank, the axes summed and the nodes."""

    source: str
    rank: int
    axes: tuple[int, ...]
    nodes: tuple[str, ...]


def _sum_line(step: Step, plan: Plan, steps: dict[str, Step], sums: dict[str, _Sum]) -> Line:
    """A reduce of a reduce's value that nothing else reads sums over both axes at once."""
    x, d = step.args[0], step.prim.axis(step.ins[0])
    before = sums.get(x)
    if before is not None and len(list(plan.graph.g.successors(steps[x].node))) == 1:
        kept = [a for a in range(before.rank) if a not in before.axes]
        now = _Sum(before.source, before.rank, tuple(sorted((*before.axes, kept[d]))), (*before.nodes, step.node))
    else:
        now = _Sum(x, len(step.ins[0]), (d,), (step.node,))
    sums[step.result] = now
    dims = str(now.axes[0] + 1) if len(now.axes) == 1 else f"({ints([a + 1 for a in now.axes])})"
    comment = f"reduce {', '.join(ascii(n) for n in now.nodes)}: {step.out}"
    return Line(step.result, f"{now.source}.sum({dims})", comment, (now.source,))


def _live(lines: list[Line], result: str) -> list[Line]:
    """The lines whose values are read, by the result or by another kept line."""
    needed, kept = {result}, []
    for line in reversed(lines):
        if line.result in needed:
            kept.append(line)
            needed.update(line.reads)
    return kept[::-1]
