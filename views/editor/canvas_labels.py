"""What each card and wire of the canvas says, read off the document's summary."""

from __future__ import annotations

from html import escape

from core.analysis.summary import Summary
from core.ir.graph import INPUT, OUTPUT

from .. import theme
from ..formatting import human, numeric_shape, params_line
from .canvas_items import NodeInfo


def node_info(summary: Summary, node: str) -> NodeInfo:
    graph, report = summary.graph, summary.shapes
    shape = report.shapes.get(node)
    numeric = (summary.numeric_shapes or {}).get(node)
    diagnostics = report.for_node(node)
    pending = [c for c in report.constraints if c.node == node]
    severities = {d.severity for d in diagnostics}
    state = (
        "error" if "error" in severities else "warning" if "warning" in severities else "pending" if pending else "ok"
    )
    if node == INPUT:
        title, category, params, doc = (
            "Input",
            "tensor",
            f"spatial axes: {graph.spatial}",
            "The operator's input tensor.",
        )
    elif node == OUTPUT:
        template = "[" + ", ".join(graph.output_shape) + "]"
        title, category, params, doc = "Output", "tensor", f"template {template}", "Must match the template shape."
    else:
        prim = graph.prim(node)
        title, category, params, doc = prim.title, prim.category, params_line(prim), prim.doc
    cost_line, cost_tip = _cost(summary, node)
    lines = [
        f"<b>{escape(title)}</b> &nbsp;<span style='color:{theme.TEXT_MUTED}'>{escape(node)}</span>",
        f"<span style='color:{theme.TEXT_MUTED}'>{escape(doc)}</span>",
    ]
    if params:
        lines.append(escape(params))
    lines.append(
        f"shape: <code>{escape(str(shape)) if shape is not None else '—'}</code>"
        + (f" = <code>{numeric_shape(numeric)}</code>" if numeric else "")
    )
    lines += cost_tip
    lines += [
        f"<span style='color:{theme.SEVERITY_COLORS[d.severity]}'>{escape(d.severity)}: {escape(d.message)}</span>"
        for d in diagnostics
    ]
    lines += [
        f"<span style='color:{theme.SEVERITY_COLORS['pending']}'>pending: {escape(c.reason)}</span>" for c in pending
    ]
    return NodeInfo(
        title=title,
        category=category,
        params=params,
        shape=str(shape) if shape is not None else "—",
        numeric=numeric_shape(numeric) if numeric else "",
        cost=cost_line,
        state=state,
        tooltip="<br>".join(lines),
    )


def edge_label(summary: Summary, src: str, dst: str, port: int) -> tuple[str, str]:
    """(label, tooltip) for the wire src -> dst: the shape of the tensor it carries."""
    shape = summary.shapes.shapes.get(src)
    numeric = (summary.numeric_shapes or {}).get(src)
    port_name = summary.graph.ports(dst)[port]
    text = str(shape) if shape is not None else ""
    tip = f"{src} → {dst}.{port_name}: {text or 'no shape (fix the error upstream)'}"
    if numeric:
        tip += f" = {numeric_shape(numeric)}"
    return text, tip


def totals(summary: Summary) -> str:
    """One line for the status area: validity, output shape, FLOPs and parameters."""
    report = summary.shapes
    errors = len(report.errors)
    state = (
        f"{errors} error{'s' * (errors != 1)}"
        if errors
        else f"{len(report.constraints)} pending"
        if report.constraints
        else "valid"
    )
    if summary.numeric_cost:
        cost = summary.numeric_cost
        return f"{state}  ·  {human(cost['flops'])} FLOPs  ·  {human(cost['macs'])} MACs  ·  {human(cost['params'])} params"
    return f"{state}  ·  FLOPs {summary.cost.total('flops')}  ·  params {summary.cost.total('params')}"


def _cost(summary: Summary, node: str) -> tuple[str, list[str]]:
    cost = summary.cost.nodes.get(node)
    if cost is None:
        return "", []
    numbers = (summary.numeric_cost or {}).get("nodes", {}).get(node)
    tip = [
        f"FLOPs: <code>{escape(str(cost.flops))}</code>" + (f" = {numbers['flops']:,}" if numbers else ""),
        f"params: <code>{escape(str(cost.params))}</code>" + (f" = {numbers['params']:,}" if numbers else ""),
    ]
    if numbers:
        parts = [f"{human(numbers['flops'])} FLOPs"] if numbers["flops"] else []
        parts += [f"{human(numbers['params'])} params"] if numbers["params"] else []
        return "  ·  ".join(parts), tip
    parts = [f"FLOPs {cost.flops}"] if str(cost.flops) != "0" else []
    parts += [f"params {cost.params}"] if str(cost.params) != "0" else []
    return "  ·  ".join(parts), tip
