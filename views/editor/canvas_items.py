"""Graphics items of the operator canvas: node cards, their ports, edges and the
rubber wire shown while connecting. Items only draw what the scene tells them;
the scene owns all editing."""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QStyleOptionGraphicsItem

from .. import theme

NODE_WIDTH = 168.0
HEADER_HEIGHT = 26.0
RETURN_STEP, RETURN_CLEARANCE = 24.0, 70.0  # a wire back to the left: its step out of a port, its drop below
LINE_HEIGHT = 17.0
#: the cards' type sizes (points): the smallest, at the zoom a graph opens at, is still readable
TITLE_PT, TEXT_PT = 9.5, 9.0
PADDING = 7.0
PORT_RADIUS = 5.0
PORT_HIT_PX = 14.0  # diameter of a port's hit area on screen, at any zoom (drawn ports stay small)
PORT_SPACING = 22.0
RADIUS = 7.0


@dataclass(frozen=True)
class NodeInfo:
    """What a node card shows, computed by the scene from the document's summary."""

    title: str
    category: str
    params: str = ""
    shape: str = ""
    numeric: str = ""
    cost: str = ""
    state: str = "ok"  # ok | error | warning | pending
    tooltip: str = ""


class PortItem(QGraphicsItem):
    """A connection point: inputs on a card's left edge, the output on its right."""

    def __init__(self, node: NodeItem, index: int, name: str, is_output: bool):
        super().__init__(node)
        self.node, self.index, self.name, self.is_output = node, index, name, is_output
        self.feedback: str | None = None  # None | "accept" | "refuse"
        self._hover = False
        self._hit = PORT_RADIUS + 4  # hit radius in scene units; set_zoom keeps it PORT_HIT_PX on screen
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setToolTip(f"output of {node.node_id}" if is_output else f"input '{name}' of {node.node_id}")

    def boundingRect(self) -> QRectF:
        r = self._hit
        return QRectF(-r, -r, 2 * r, 2 * r)

    def set_zoom(self, zoom: float) -> None:
        """Keep the hit area PORT_HIT_PX wide on screen (or larger at high zoom)."""
        hit = max(PORT_RADIUS + 4, PORT_HIT_PX / 2 / zoom)
        if hit != self._hit:
            self.prepareGeometryChange()
            self._hit = hit

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addEllipse(self.boundingRect())
        return path

    def set_feedback(self, feedback: str | None) -> None:
        if feedback != self.feedback:
            self.feedback = feedback
            self.update()

    def hoverEnterEvent(self, event):
        self._hover = True
        self.update()

    def hoverLeaveEvent(self, event):
        self._hover = False
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        color = {"accept": QColor(theme.ACCEPT), "refuse": theme.severity_color("error")}.get(
            self.feedback or "", theme.category_color(self.node.info.category)
        )
        r = PORT_RADIUS + (1.5 if self._hover or self.feedback else 0)
        painter.setPen(QPen(color, 2))
        connected = self.node.port_connected(self)
        painter.setBrush(color if connected or self.feedback else QColor(theme.CARD_BG))
        painter.drawEllipse(QPointF(0, 0), r, r)


class NodeItem(QGraphicsItem):
    """A card for one node of the graph, centred on the node's layout position."""

    def __init__(self, node_id: str, port_names: tuple[str, ...], has_output: bool, info: NodeInfo):
        super().__init__()
        self.node_id = node_id
        self.info = info
        self.edges: list[EdgeItem] = []
        self.setFlags(
            QGraphicsItem.GraphicsItemFlag.ItemIsMovable
            | QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
            | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges
        )
        self.setZValue(1)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.inputs = [PortItem(self, i, name, False) for i, name in enumerate(port_names)]
        self.output = PortItem(self, 0, "y", True) if has_output else None
        self._height = self._measure()
        self._place_ports()
        self.setToolTip(info.tooltip)

    # geometry ----------------------------------------------------------------
    def lines(self) -> list[tuple[str, str]]:
        """(kind, text) per drawn line: a text too wide for the card wraps at its separators."""
        lines = [
            ("params", self.info.params),
            ("shape", self.info.shape),
            ("numeric", self.info.numeric),
            ("cost", self.info.cost),
        ]
        width = NODE_WIDTH - 2 * PADDING
        return [(kind, part) for kind, text in lines if text for part in wrap(text, card_font(kind), width)]

    def _measure(self) -> float:
        body = max(len(self.lines()), 1) * LINE_HEIGHT + 2 * PADDING - 4
        ports = max(len(self.inputs), 1) * PORT_SPACING
        return HEADER_HEIGHT + max(body, ports)

    def ports(self) -> list[PortItem]:
        return [*self.inputs, *([self.output] if self.output is not None else [])]

    def card_rect(self) -> QRectF:
        return QRectF(-NODE_WIDTH / 2, -self._height / 2, NODE_WIDTH, self._height)

    def boundingRect(self) -> QRectF:
        return self.card_rect().adjusted(-38, -6, 6, 8)

    def _place_ports(self) -> None:
        n = len(self.inputs)
        for i, port in enumerate(self.inputs):
            port.setPos(-NODE_WIDTH / 2, (i - (n - 1) / 2) * PORT_SPACING + HEADER_HEIGHT / 2)
        if self.output is not None:
            self.output.setPos(NODE_WIDTH / 2, HEADER_HEIGHT / 2)

    def set_info(self, info: NodeInfo) -> None:
        if info == self.info:
            return
        self.prepareGeometryChange()
        self.info = info
        self._height = self._measure()
        self._place_ports()
        self.setToolTip(info.tooltip)
        self.update()
        self.update_edges()

    def port_connected(self, port: PortItem) -> bool:
        if port.is_output:
            return any(e.src is self for e in self.edges)
        return any(e.dst is self and e.port == port.index for e in self.edges)

    def update_edges(self) -> None:
        for edge in self.edges:
            edge.update_path()

    def itemChange(self, change, value):
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            self.update_edges()
        return super().itemChange(change, value)

    # drawing -------------------------------------------------------------------
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        rect = self.card_rect()
        accent = theme.category_color(self.info.category)
        selected = self.isSelected()

        painter.setPen(Qt.PenStyle.NoPen)  # soft shadow
        for i, alpha in ((3, 18), (2, 22), (1, 26)):
            painter.setBrush(QColor(15, 23, 42, alpha))
            painter.drawRoundedRect(rect.translated(0, i + 0.5), RADIUS + i / 2, RADIUS + i / 2)

        border = {"error": theme.severity_color("error"), "warning": theme.severity_color("warning")}.get(
            self.info.state, QColor(theme.CARD_BORDER)
        )
        if selected:
            border = QColor(theme.SELECTION)
        painter.setBrush(QColor(theme.CARD_ERROR_BG if self.info.state == "error" else theme.CARD_BG))
        pen = QPen(border, 2.2 if selected or self.info.state in ("error", "warning") else 1.0)
        if self.info.state == "warning" and not selected:
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawRoundedRect(rect, RADIUS, RADIUS)

        painter.save()  # header band: the card's top, clipped to HEADER_HEIGHT
        painter.setClipRect(QRectF(rect.left() - 2, rect.top() - 2, rect.width() + 4, HEADER_HEIGHT + 2))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.severity_color("error") if self.info.state == "error" else accent)
        painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, 0), RADIUS, RADIUS)
        painter.restore()

        text_left, text_width = rect.left() + PADDING, rect.width() - 2 * PADDING
        painter.setFont(theme.ui_font(TITLE_PT, bold=True))
        painter.setPen(QColor("#ffffff"))
        title_rect = QRectF(rect.left() + PADDING, rect.top(), rect.width() - 2 * PADDING, HEADER_HEIGHT)
        painter.drawText(title_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, self.info.title)
        if self.info.title.lower() != self.node_id:  # the id in the room the title leaves (never over it)
            room = text_width - QFontMetricsF(theme.ui_font(TITLE_PT, bold=True)).horizontalAdvance(self.info.title) - 8
            painter.setFont(theme.ui_font(TEXT_PT))
            painter.setPen(QColor(255, 255, 255, 200))
            painter.drawText(
                title_rect,
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                _elide(self.node_id, theme.ui_font(TEXT_PT), min(80, max(room, 0))),
            )
        badge = {"error": "!", "pending": "?"}.get(self.info.state)
        if badge:
            self._paint_badge(painter, QPointF(rect.right() - 2, rect.top() + 2), badge)

        y = rect.top() + HEADER_HEIGHT + PADDING - 2
        for kind, text in self.lines():
            font = card_font(kind)
            painter.setFont(font)
            painter.setPen(QColor(theme.TEXT if kind == "shape" else theme.TEXT_MUTED))
            line = QRectF(text_left, y, text_width, LINE_HEIGHT)
            painter.drawText(
                line, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, _elide(text, font, text_width)
            )
            y += LINE_HEIGHT

        if len(self.inputs) > 1:  # name the ports of a multi-input node, just outside the card
            painter.setFont(theme.ui_font(TEXT_PT))
            painter.setPen(QColor(theme.TEXT_MUTED))
            for port in self.inputs:
                p = port.pos()
                painter.drawText(
                    QRectF(p.x() - 34, p.y() - 18, 28, 14),
                    Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                    port.name,
                )

    def _paint_badge(self, painter: QPainter, at: QPointF, text: str) -> None:
        color = theme.severity_color("error" if text == "!" else "pending")
        painter.setPen(QPen(QColor("#ffffff"), 1.5))
        painter.setBrush(color)
        painter.drawEllipse(at, 8, 8)
        painter.setFont(theme.ui_font(7.5, bold=True))
        painter.setPen(QColor("#ffffff"))
        painter.drawText(QRectF(at.x() - 8, at.y() - 8, 16, 16), Qt.AlignmentFlag.AlignCenter, text)


class EdgeItem(QGraphicsPathItem):
    """A wire from a node's output to one input port of another, labelled with its tensor's shape."""

    def __init__(self, src: NodeItem, dst: NodeItem, port: int):
        super().__init__()
        self.src, self.dst, self.port = src, dst, port
        self.label = ""
        self._hover = False
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setAcceptHoverEvents(True)
        self.setZValue(0)
        src.edges.append(self)
        dst.edges.append(self)
        self.update_path()

    @property
    def key(self) -> tuple[str, str]:
        return self.src.node_id, self.dst.node_id

    def detach(self) -> None:
        for node in (self.src, self.dst):
            if self in node.edges:
                node.edges.remove(self)
            node.update()

    def endpoints(self) -> tuple[QPointF, QPointF]:
        output = self.src.output
        assert output is not None  # an edge leaves a node that has an output port
        return output.scenePos(), self.dst.inputs[self.port].scenePos()

    def update_path(self) -> None:
        a, b = self.endpoints()
        self.setPath(wire_path(a, b))
        self.update()

    def set_label(self, text: str, tooltip: str) -> None:
        if (text, tooltip) != (self.label, self.toolTip()):
            self.label = text
            self.setToolTip(tooltip)
            self.update()

    def hoverEnterEvent(self, event):
        self._hover = True
        self.setZValue(5)  # a hovered wire shows its whole label, above the cards
        self.update()

    def hoverLeaveEvent(self, event):
        self._hover = False
        self.setZValue(0)
        self.update()

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(12)
        return stroker.createStroke(self.path())

    def boundingRect(self) -> QRectF:
        return super().boundingRect().adjusted(-130, -14, 130, 14)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        color = (
            QColor(theme.SELECTION)
            if self.isSelected()
            else theme.tint(theme.category_color(self.src.info.category), 0.25)
        )
        painter.setPen(QPen(color, 3.0 if self.isSelected() else 2.0, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path())
        if self.label:
            self._paint_label(painter, color)

    def _paint_label(self, painter: QPainter, color: QColor) -> None:
        a, b = self.endpoints()
        font = theme.mono_font(7)
        width = QFontMetricsF(font).horizontalAdvance(self.label) + 10
        if width > b.x() - a.x() - 10 and not (self._hover or self.isSelected()):
            return  # no room between the cards: the source card and the tooltip carry the shape
        text = self.label
        mid = self.path().pointAtPercent(0.5)
        rect = QRectF(mid.x() - width / 2, mid.y() - 8, width, 16)
        painter.setPen(QPen(color, 1))
        painter.setBrush(QColor(theme.CARD_BG))
        painter.drawRoundedRect(rect, 8, 8)
        painter.setFont(font)
        painter.setPen(QColor(theme.TEXT))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)


class WireItem(QGraphicsPathItem):
    """The dashed wire that follows the mouse while a connection is dragged."""

    def __init__(self, start: QPointF):
        super().__init__()
        self.start = start
        self.setZValue(3)
        pen = QPen(QColor(theme.SELECTION), 2, Qt.PenStyle.DashLine, Qt.PenCapStyle.RoundCap)
        self.setPen(pen)
        self.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        self.set_end(start)

    def set_end(self, end: QPointF, refused: bool = False) -> None:
        pen = self.pen()
        pen.setColor(theme.severity_color("error") if refused else QColor(theme.SELECTION))
        self.setPen(pen)
        self.setPath(wire_path(self.start, end))


def wire_path(a: QPointF, b: QPointF) -> QPainterPath:
    """A horizontal S-curve from an output (a) to an input (b) to its right; to an input to its
    left (the next row of a wrapped layout), a return: out, down between the rows, back, in."""
    if b.x() >= a.x() - RETURN_STEP:
        dx = max(abs(b.x() - a.x()) * 0.5, 40.0)
        path = QPainterPath(a)
        path.cubicTo(QPointF(a.x() + dx, a.y()), QPointF(b.x() - dx, b.y()), b)
        return path
    turn = (a.y() + b.y()) / 2 if abs(b.y() - a.y()) > 2 * RETURN_CLEARANCE else max(a.y(), b.y()) + RETURN_CLEARANCE
    right, left = a.x() + RETURN_STEP, b.x() - RETURN_STEP
    return _rounded([a, QPointF(right, a.y()), QPointF(right, turn), QPointF(left, turn), QPointF(left, b.y()), b])


def _rounded(points: list[QPointF], radius: float = 12.0) -> QPainterPath:
    """A polyline through `points` with its corners rounded."""
    path = QPainterPath(points[0])
    for before, corner, after in zip(points, points[1:], points[2:]):
        into, out = corner - before, after - corner
        r = min(radius, _length(into) / 2, _length(out) / 2)
        path.lineTo(corner - into * (r / max(_length(into), 1e-9)))
        path.quadTo(corner, corner + out * (r / max(_length(out), 1e-9)))
    path.lineTo(points[-1])
    return path


def _length(p: QPointF) -> float:
    return (p.x() ** 2 + p.y() ** 2) ** 0.5


def card_font(kind: str) -> QFont:
    """Shapes in a fixed-width font (their brackets line up), the rest in the UI font."""
    return theme.mono_font(TEXT_PT) if kind in ("shape", "numeric") else theme.ui_font(TEXT_PT)


def wrap(text: str, font: QFont, width: float) -> list[str]:
    """`text` in lines no wider than `width`, broken after a separator (a shape's ', ' stays at
    the end of its line, a cost line's ' · ' and the space between parameters go); a piece with
    no separator to break at stays whole (and is elided when drawn)."""
    metrics = QFontMetricsF(font)
    lines, line = [], ""
    for piece in re.findall(r".+?(?:, | · |  |$)", text):  # each piece keeps the separator after it
        if line and metrics.horizontalAdvance(line + piece.rstrip()) > width:
            lines.append(line.rstrip().removesuffix(" ·"))
            line = ""
        line += piece
    return [*lines, line.rstrip()] if line else lines


def _elide(text: str, font, width: float) -> str:
    return QFontMetricsF(font).elidedText(text, Qt.TextElideMode.ElideRight, max(width, 0))


class HintItem(QGraphicsItem):
    """A small floating note near the cursor, e.g. why a connection is refused."""

    def __init__(self):
        super().__init__()
        self.text = ""
        self.severity = "info"
        self.setZValue(4)
        self.setVisible(False)
        self._font = theme.ui_font(8)

    def show_text(self, text: str, severity: str, at: QPointF) -> None:
        self.prepareGeometryChange()
        self.text, self.severity = text, severity
        self.setPos(at + QPointF(14, 14))
        self.setVisible(bool(text))
        self.update()

    def boundingRect(self) -> QRectF:
        metrics = QFontMetricsF(self._font)
        return QRectF(0, 0, min(metrics.horizontalAdvance(self.text), 420) + 16, metrics.height() + 10)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = self.boundingRect()
        color = QColor(theme.ACCEPT) if self.severity == "accept" else theme.severity_color(self.severity)
        painter.setPen(QPen(color, 1.2))
        painter.setBrush(theme.tint(color, 0.92))
        painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), 5, 5)
        painter.setFont(self._font)
        painter.setPen(QColor(theme.TEXT))
        painter.drawText(
            rect.adjusted(8, 0, -8, 0),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            _elide(self.text, self._font, 420),
        )
