"""Pictures drawn offscreen by Qt: an operator graph as the editor's canvas shows it
(PNG, SVG), the same graph in brief for gallery thumbnails, and a Pareto plot of the
results store (PNG, SVG).

The graph is drawn by the editor's own scene (views.editor.canvas), so a picture matches what
the editor shows and needs no Graphviz. A QApplication must exist: drawing_application
makes one on the offscreen platform where a process (the CLI, a worker) has none. Nothing here waits on workers: drawing tens of cards takes
milliseconds."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter, QPen
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QGraphicsItem

from core.export import ExportError, write_with
from core.ir.graph import INPUT, OUTPUT, OperatorGraph
from core.ir.layout import layered_layout
from core.store import RESULT_OBJECTIVES, Store, fronts
from core.store.pareto import staircase

from . import theme
from .editor.canvas import OperatorScene
from .editor.canvas_items import NODE_WIDTH, RETURN_STEP, wire_path
from .editor.document import OperatorDocument
from .result_columns import BY_KEY, origin_color

MARGIN = 24.0
MAX_SIDE = 4096  # pixels: a picture of a huge graph is scaled down to this
MIN_CARD = 80  # pixels: narrower, a card's text (9.5 pt in the editor) falls under 6 px and cannot be read
PARETO_SIZE = (900, 600)
BRIEF_BOX = (190.0, 64.0)  # a node's box in a brief picture, in layout units (core.ir.layout: 250 apart)


def drawing_application() -> QApplication:
    """The process's QApplication, made on the offscreen platform (no display needed) if new."""
    if QApplication.instance() is None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    return theme.application()


def graph_image(graph: OperatorGraph, scale: float = 1.5) -> QImage:
    """The graph drawn on the canvas background at `scale` pixels per scene unit (at most
    MAX_SIDE pixels a side). Sizes shown on the cards use the graph's bindings. ExportError for
    a graph so large that MAX_SIDE pixels would shrink its cards to specks (a chain of
    thousands of nodes)."""
    with _drawn(graph) as (scene, rect):
        factor = min(scale, MAX_SIDE / max(rect.width(), rect.height()))
        size = QSize(max(1, round(rect.width() * factor)), max(1, round(rect.height() * factor)))
        if NODE_WIDTH * factor < MIN_CARD:
            raise ExportError(
                f"{graph.name or 'the operator'} has {len(graph.g):,} nodes: a picture of at most "
                f"{MAX_SIDE} pixels a side ({size.width()}x{size.height()}) would draw each card "
                f"{NODE_WIDTH * factor:.1f} pixels wide; export it as svg, or as dot for Graphviz"
            )
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        _paint(image, lambda painter: _paint_scene(painter, scene, rect, QRectF(image.rect())))
    return image


def graph_brief(graph: OperatorGraph, size: QSize) -> QImage:
    """The graph in brief, readable at a gallery thumbnail's size where the editor's cards are
    not: a box per node in its category's colour, named by its primitive, wired as in the
    editor and laid out (core.ir.layout) for the picture's shape."""
    positions = layered_layout(graph, size.width() / size.height())
    w, h = BRIEF_BOX
    xs, ys = [x for x, _ in positions.values()], [y for _, y in positions.values()]
    source = QRectF(min(xs) - w / 2, min(ys) - h / 2, max(xs) - min(xs) + w, max(ys) - min(ys) + h)
    source.adjust(-MARGIN - RETURN_STEP, -MARGIN, MARGIN + RETURN_STEP, MARGIN)  # room for wires back to the left
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)

    def paint(painter: QPainter) -> None:
        painter.fillRect(QRectF(image.rect()), QColor(theme.CANVAS_BG))
        scale = min(size.width() / source.width(), size.height() / source.height())
        painter.translate(size.width() / 2, size.height() / 2)
        painter.scale(scale, scale)
        painter.translate(-source.center())
        for src, dst, _ in graph.edges():
            (ax, ay), (bx, by) = positions[src], positions[dst]
            painter.setPen(QPen(theme.tint(_brief_color(graph, src), 0.25), 4.0))
            painter.drawPath(wire_path(QPointF(ax + w / 2, ay), QPointF(bx - w / 2, by)))
        font = theme.ui_font(bold=True)
        font.setPixelSize(round(h * 0.38))
        painter.setFont(font)
        metrics = QFontMetricsF(font)
        for node, (x, y) in positions.items():
            box = QRectF(x - w / 2, y - h / 2, w, h)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(_brief_color(graph, node))
            painter.drawRoundedRect(box, 10, 10)
            painter.setPen(QColor("#ffffff"))
            names = [node.capitalize()] if node in (INPUT, OUTPUT) else [graph.prim(node).title, graph.prim(node).op]
            name = next((n for n in names if metrics.horizontalAdvance(n) <= w - 12), names[-1])  # "fc" if need be
            painter.drawText(
                box, Qt.AlignmentFlag.AlignCenter, metrics.elidedText(name, Qt.TextElideMode.ElideRight, w - 12)
            )

    _paint(image, paint)
    return image


def _brief_color(graph: OperatorGraph, node: str) -> QColor:
    return theme.category_color("tensor" if node in (INPUT, OUTPUT) else graph.prim(node).category)


def save_graph_picture(graph: OperatorGraph, path: Path) -> Path:
    """PNG or SVG by the suffix of `path` (written via a temporary file)."""
    _check_suffix(path)
    if path.suffix.lower() == ".png":
        image = graph_image(graph)
        return write_with(path, lambda tmp: _save_image(image, tmp, path))
    with _drawn(graph) as (scene, rect):
        target = QRectF(QPointF(), rect.size())
        return write_with(
            path,
            lambda tmp: _save_svg(
                tmp,
                target.size().toSize(),
                graph.name or "operator",
                lambda painter: _paint_scene(painter, scene, rect, target),
            ),
        )


def save_pareto_picture(store: Store, columns: Sequence[str], path: Path) -> Path:
    """Every result with both values as a dot coloured by origin, the front ringed and
    joined by its staircase; PNG or SVG by the suffix of `path`."""
    _check_suffix(path)
    plot = _pareto_plot(store, *columns)
    try:
        size = plot.size()
        if path.suffix.lower() == ".png":
            image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
            _paint(image, lambda painter: _paint_plot(painter, plot))
            return write_with(path, lambda tmp: _save_image(image, tmp, path))
        return write_with(
            path, lambda tmp: _save_svg(tmp, size, "Pareto front", lambda painter: _paint_plot(painter, plot))
        )
    finally:
        plot.close()
        plot.deleteLater()


# -- painting ----------------------------------------------------------------------------
def _check_suffix(path: Path) -> None:
    if path.suffix.lower() not in (".png", ".svg"):
        raise ExportError(f"{path}: pictures are .png or .svg")


def _paint(device, paint: Callable[[QPainter], None]) -> None:
    painter = QPainter(device)
    try:
        painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        paint(painter)
    finally:
        painter.end()


def _paint_scene(painter: QPainter, scene: OperatorScene, source: QRectF, target: QRectF) -> None:
    """The background over all of `target`; the graph scaled into it, aspect kept, centred."""
    painter.fillRect(target, QColor(theme.CANVAS_BG))
    fitted = source.size().scaled(target.size(), Qt.AspectRatioMode.KeepAspectRatio)
    placed = QRectF(target.topLeft(), fitted)
    placed.moveCenter(target.center())
    scene.render(painter, placed, source, Qt.AspectRatioMode.IgnoreAspectRatio)


def _save_image(image: QImage, tmp: Path, path: Path) -> None:
    if not image.save(str(tmp), "PNG"):  # type: ignore[call-overload]  # the stub wants bytes; PySide6 takes str
        raise ExportError(f"cannot write the picture {path}")


def _save_svg(tmp: Path, size: QSize, title: str, paint: Callable[[QPainter], None]) -> None:
    generator = QSvgGenerator()
    generator.setFileName(str(tmp))
    generator.setSize(size)
    generator.setViewBox(QRectF(0, 0, size.width(), size.height()))
    generator.setTitle(title)
    generator.setDescription("Exported by Tessera")
    _paint(generator, paint)


# -- the graph -------------------------------------------------------------------------
class _drawn:
    """Context: the graph in a scene of its own, and the rectangle its items cover."""

    def __init__(self, graph: OperatorGraph):
        self.document = OperatorDocument(graph)
        self.scene = OperatorScene()

    def __enter__(self) -> tuple[OperatorScene, QRectF]:
        self.scene.set_document(self.document)
        rect = QRectF()
        for item in self.scene.items():
            item.setCacheMode(QGraphicsItem.CacheMode.NoCache)  # vectors, not cached bitmaps, in an SVG
            if item.isVisible():
                rect = rect.united(item.sceneBoundingRect())
        return self.scene, rect.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)

    def __exit__(self, *exc) -> None:
        self.scene.detach()
        self.scene.deleteLater()
        self.document.deleteLater()


# -- the Pareto plot ---------------------------------------------------------------------
def _pareto_plot(store: Store, x_key: str, y_key: str) -> pg.PlotWidget:
    """A laid-out plot widget, never shown."""
    for key in (x_key, y_key):
        if key not in RESULT_OBJECTIVES:
            raise ExportError(f"unknown plot axis {key!r}; axes: {', '.join(RESULT_OBJECTIVES)}")
    rows = fronts.points(store, x_key, y_key)
    if not rows:
        raise ExportError(f"no result in {store.path} has both {x_key} and {y_key}; nothing to plot")
    front = store.pareto([x_key, y_key])
    origins = sorted({r[0] or "" for r in rows})
    plot = pg.PlotWidget(background="w")
    plot.resize(*PARETO_SIZE)
    item = plot.getPlotItem()
    item.showGrid(x=True, y=True, alpha=0.25)
    for side, key in (("bottom", x_key), ("left", y_key)):
        item.setLabel(side, _axis_title(key))
        item.getAxis(side).enableAutoSIPrefix(False)  # "Accuracy (x0.001)" helps nobody
    item.setTitle(
        f"Pareto front: {_axis_title(y_key)} vs {_axis_title(x_key)} ({len(front)} of {len(rows)} results)",
        color=theme.TEXT,
    )
    values = np.array([r[1:] for r in rows], dtype=float)
    of_row = np.array([r[0] or "" for r in rows], dtype=object)
    legend = item.addLegend(
        offset=_emptiest_corner(values),
        brush=pg.mkBrush(255, 255, 255, 210),
        pen=pg.mkPen(theme.CARD_BORDER),
        labelTextColor=theme.TEXT,
    )
    for origin in origins:
        points = values[of_row == origin]
        color = QColor(origin_color(origin, origins))
        color.setAlpha(170)
        item.addItem(
            pg.ScatterPlotItem(
                points[:, 0], points[:, 1], size=7, pen=None, brush=pg.mkBrush(color), name=origin or "unknown origin"
            )
        )
    xs = np.array([r[x_key] for r in front], dtype=float)
    ys = np.array([r[y_key] for r in front], dtype=float)
    sx, sy = staircase(xs, ys, RESULT_OBJECTIVES[x_key])
    item.addItem(pg.PlotCurveItem(sx, sy, pen=pg.mkPen(theme.TEXT, width=1.5)))
    ring = pg.ScatterPlotItem(xs, ys, size=12, pen=pg.mkPen(theme.TEXT, width=1.5), brush=None)
    item.addItem(ring)
    legend.addItem(ring, "Pareto front")
    _lay_out(plot)
    return plot


def _paint_plot(painter: QPainter, plot: pg.PlotWidget) -> None:
    """The plot in export mode, as pyqtgraph's exporters do: dots drawn as shapes, not bitmaps."""
    items = [i for i in plot.scene().items() if hasattr(i, "setExportMode")]
    for item in items:
        item.setExportMode(
            True, {"antialias": True, "background": QColor("white"), "painter": painter, "resolutionScale": 1.0}
        )
    try:
        plot.render(painter)
    finally:
        for item in items:
            item.setExportMode(False)


def _lay_out(widget) -> None:
    """Let Qt lay the widget out as if shown, without putting it on any screen; the axes
    size themselves to their tick labels during the first paint, hence a second round."""
    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    widget.show()
    for _ in range(2):
        widget.grab()
        QApplication.processEvents()


def _emptiest_corner(values: np.ndarray) -> tuple[int, int]:
    """pyqtgraph legend offset of the plot corner farthest from every point (the legend hides none)."""
    span = np.ptp(values, axis=0)
    scaled = (values - values.min(axis=0)) / np.where(span > 0, span, 1)
    corners = {(10, 10): (0, 1), (-10, 10): (1, 1), (10, -10): (0, 0), (-10, -10): (1, 0)}  # offset: (x, y)
    return max(corners, key=lambda c: np.min(np.hypot(*(scaled - corners[c]).T)))


def _axis_title(key: str) -> str:
    column = BY_KEY.get(key)
    return column.axis or column.title if column is not None else key
