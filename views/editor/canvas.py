"""The operator canvas: a QGraphicsScene mirroring an OperatorGraph and the view
that shows it. The scene follows the graph's events; every edit it makes goes
through the document's Editor (one undo step each), and connection rules come
from graph.check_connect, so the canvas decides nothing about the model."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence, QPainter, QPen, QTransform, QWheelEvent
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QMenu

from core.errors import TesseraError
from core.ir.graph import INPUT, OUTPUT, GraphEvent
from core.ir.layout import CANVAS_ASPECT, layered_layout
from core.ir.primitives import REGISTRY

from .. import theme
from .canvas_items import TEXT_PT, EdgeItem, HintItem, NodeItem, PortItem, WireItem
from .canvas_labels import edge_label, node_info
from .document import OperatorDocument
from .palette import primitive_from_mime

GRID = 10.0
READABLE_TEXT_PX = 9.0  # the smallest card text, on screen, that a graph opens at
READABLE_ZOOM = READABLE_TEXT_PX / (TEXT_PT * 96 / 72)  # opening never shrinks a graph below this
FIT_MARGIN = 24.0  # scene units around the cards when fitting
MAX_FIT_ZOOM = 1.25  # nor blows a small one up beyond this
MIN_ZOOM, MAX_ZOOM = 0.15, 4.0
ICON_PROPERTY = "tesseraIcon"  # an action's icon name, kept to draw it in another theme
BUILD_STEP = 250  # cards and wires made between two progress reports of a graph's opening


class OperatorScene(QGraphicsScene):
    statusMessage = Signal(str)  # why a connection was refused, what a drag would do
    building = Signal(int, int)  # set_document's progress: items made, of how many (every BUILD_STEP)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.document: OperatorDocument | None = None
        self._nodes: dict[str, NodeItem] = {}
        self._edges: dict[tuple[str, str], EdgeItem] = {}
        self._press_positions: dict[str, QPointF] = {}
        self._wire: WireItem | None = None
        self._wire_src: str | None = None
        self._target: PortItem | None = None
        self._target_ok = False
        self._hint = HintItem()
        self.addItem(self._hint)
        self._zoom = 1.0

    # the document -------------------------------------------------------------
    def set_document(self, document: OperatorDocument) -> None:
        if self.document is not None:
            self.document.graph.unsubscribe(self._on_graph_event)
            self.document.summaryChanged.disconnect(self.refresh)
        for item in [*self._edges.values(), *self._nodes.values()]:
            self.removeItem(item)
        self._nodes.clear()
        self._edges.clear()
        self.document = document
        graph = document.graph
        total = graph.g.number_of_nodes() + graph.g.number_of_edges()
        for done, node in enumerate(graph.g.nodes, 1):
            self._add_node(node)
            if done % BUILD_STEP == 0:
                self.building.emit(done, total)
        for done, (src, dst, port) in enumerate(graph.edges(), graph.g.number_of_nodes() + 1):
            self._add_edge(src, dst, port)
            if done % BUILD_STEP == 0:
                self.building.emit(done, total)
        graph.subscribe(self._on_graph_event)
        document.summaryChanged.connect(self.refresh)
        self._label_wires()  # the cards were just made from this summary

    def detach(self) -> None:
        """Stop following the document (before the scene or the document goes away)."""
        if self.document is not None:
            self.document.graph.unsubscribe(self._on_graph_event)
            self.document.summaryChanged.disconnect(self.refresh)
            self.document = None

    def _on_graph_event(self, event: GraphEvent) -> None:
        graph = self.document.graph
        if event.kind == "node_added":
            self._add_node(event.node)
        elif event.kind == "node_removed":
            item = self._nodes.pop(event.node)
            self.removeItem(item)
        elif event.kind == "edge_added":
            self._add_edge(*event.edge)
        elif event.kind == "edge_removed":
            edge = self._edges.pop(event.edge[:2])
            edge.detach()
            self.removeItem(edge)
        elif event.kind == "moved":
            x, y = graph.pos(event.node)
            self._nodes[event.node].setPos(x, y)

    def set_zoom(self, zoom: float) -> None:
        """The views' zoom changed: ports keep their on-screen hit area."""
        self._zoom = zoom
        for item in self._nodes.values():
            for port in item.ports():
                port.set_zoom(zoom)

    def _add_node(self, node: str) -> None:
        graph = self.document.graph
        has_output = node != OUTPUT
        item = NodeItem(node, graph.ports(node), has_output, node_info(self.document.summary, node))
        for port in item.ports():
            port.set_zoom(self._zoom)
        item.setPos(*graph.pos(node))
        self._nodes[node] = item
        self.addItem(item)

    def _add_edge(self, src: str, dst: str, port: int) -> None:
        edge = EdgeItem(self._nodes[src], self._nodes[dst], port)
        self._edges[(src, dst)] = edge
        self.addItem(edge)
        self._nodes[src].update()
        self._nodes[dst].update()

    def refresh(self) -> None:
        """Re-label every card and wire from the current summary (cheap: tens of items)."""
        summary = self.document.summary
        for node, item in self._nodes.items():
            item.set_info(node_info(summary, node))
        self._label_wires()

    def _label_wires(self) -> None:
        """Label every wire from the current summary, and make room around the cards."""
        summary = self.document.summary
        for (src, dst), edge in self._edges.items():
            edge.set_label(*edge_label(summary, src, dst, edge.port))
        self.setSceneRect(self.itemsBoundingRect().adjusted(-600, -400, 600, 400))

    # queries --------------------------------------------------------------------
    def node_item(self, node: str) -> NodeItem | None:
        return self._nodes.get(node)

    def edge_item(self, src: str, dst: str) -> EdgeItem | None:
        return self._edges.get((src, dst))

    def selected_nodes(self) -> list[str]:
        return [i.node_id for i in self.selectedItems() if isinstance(i, NodeItem)]

    def selected_edges(self) -> list[tuple[str, str]]:
        return [i.key for i in self.selectedItems() if isinstance(i, EdgeItem)]

    def nodes_rect(self) -> QRectF:
        rect = QRectF()
        for item in self._nodes.values():
            rect = rect.united(item.sceneBoundingRect())
        return rect

    # edits (each one undo step) ------------------------------------------------
    def select_node(self, node: str) -> None:
        self.clearSelection()
        item = self._nodes.get(node)
        if item is not None:
            item.setSelected(True)

    def select_all(self) -> None:
        for item in [*self._nodes.values(), *self._edges.values()]:
            item.setSelected(True)

    def add_primitive(self, op: str, at: QPointF) -> str | None:
        try:
            node = self.document.editor.add_node(op, pos=_snap(at))
        except TesseraError as e:
            self.statusMessage.emit(f"Cannot add {op}: {e}")
            return None
        self.select_node(node)
        return node

    def delete_selection(self) -> None:
        nodes, edges = self.selected_nodes(), self.selected_edges()
        kept = [n for n in nodes if n in (INPUT, OUTPUT)]
        if kept:
            self.statusMessage.emit(f"The {' and '.join(kept)} node{'s' * (len(kept) > 1)} cannot be deleted")
        self.document.editor.remove(nodes, edges)

    def auto_layout(self, aspect: float = CANVAS_ASPECT) -> None:
        """Lay the graph out in layers, wrapped onto rows that suit a view of `aspect` (width / height)."""
        self.document.editor.move(layered_layout(self.document.graph, aspect))

    # mouse: moving nodes and dragging connections ------------------------------
    def mousePressEvent(self, event) -> None:
        port = self._port_at(event.scenePos())
        if event.button() == Qt.MouseButton.LeftButton and port is not None and port.is_output:
            self._wire_src = port.node.node_id
            self._wire = WireItem(port.scenePos())
            self.addItem(self._wire)
            event.accept()
            return
        super().mousePressEvent(event)
        self._press_positions = {i.node_id: i.pos() for i in self.selectedItems() if isinstance(i, NodeItem)}

    def mouseMoveEvent(self, event) -> None:
        if self._wire is None:
            super().mouseMoveEvent(event)
            return
        self._set_target(self._input_port_near(event.scenePos()))
        end = self._target.scenePos() if self._target is not None and self._target_ok else event.scenePos()
        self._wire.set_end(end, refused=self._target is not None and not self._target_ok)
        self._hint.show_text(self._hint.text if self._target is not None else "", self._hint.severity, event.scenePos())

    def mouseReleaseEvent(self, event) -> None:
        if self._wire is not None:
            self._finish_connection()
            event.accept()
            return
        super().mouseReleaseEvent(event)
        moved = {
            n: _snap(self._nodes[n].pos())
            for n, p in self._press_positions.items()
            if n in self._nodes and self._nodes[n].pos() != p
        }
        self._press_positions = {}
        if moved:
            self.document.editor.move(moved)

    def _set_target(self, port: PortItem | None) -> None:
        if port is self._target:
            return
        if self._target is not None:
            self._target.set_feedback(None)
        self._target, self._target_ok = port, False
        if port is None:
            return
        dst, src = port.node.node_id, self._wire_src
        where = f"{src} → {dst}" + (f" ({port.name})" if len(port.node.inputs) > 1 else "")
        try:
            self.document.graph.check_connect(src, dst, port.index)
        except TesseraError as e:
            message, severity = f"Cannot connect {where}: {e}", "error"
        else:
            self._target_ok = True
            message, severity = f"Release to connect {where}", "accept"
        port.set_feedback("accept" if self._target_ok else "refuse")
        self._hint.show_text(message, severity, port.scenePos())
        self.statusMessage.emit(message)

    def _finish_connection(self) -> None:
        target, ok, src = self._target, self._target_ok, self._wire_src
        self._set_target(None)
        self.removeItem(self._wire)
        self._wire = self._wire_src = None
        self._hint.show_text("", "info", QPointF())
        if target is None or not ok:
            return  # a refusal's reason stays in the status bar
        try:
            self.document.editor.connect(src, target.node.node_id, target.index)
        except TesseraError as e:
            self.statusMessage.emit(f"Cannot connect: {e}")
        else:
            self.statusMessage.emit(f"Connected {src} → {target.node.node_id}")

    def _port_at(self, pos: QPointF) -> PortItem | None:
        for item in self.items(pos):
            if isinstance(item, PortItem):
                return item
        return None

    def _input_port_near(self, pos: QPointF) -> PortItem | None:
        """The input port under the cursor, or the only input of the card under it."""
        for item in self.items(pos):
            if isinstance(item, PortItem) and not item.is_output:
                return item
            if isinstance(item, NodeItem) and item.node_id != self._wire_src:
                return item.inputs[0] if len(item.inputs) == 1 else None
        return None

    # context menu ---------------------------------------------------------------
    def contextMenuEvent(self, event) -> None:
        item = next((i for i in self.items(event.scenePos()) if isinstance(i, (NodeItem, EdgeItem))), None)
        menu = QMenu()
        if item is not None:
            if not item.isSelected():
                self.clearSelection()
                item.setSelected(True)
            menu.addAction("Delete", self.delete_selection)
        else:
            add = menu.addMenu("Add primitive")
            at = event.scenePos()
            for op, cls in sorted(REGISTRY.items(), key=lambda kv: (kv[1].category, kv[1].title)):
                action = add.addAction(theme.dot_icon(theme.CATEGORY_COLORS[cls.category]), cls.title)
                action.triggered.connect(lambda _=False, op=op: self.add_primitive(op, at))
            menu.addAction("Auto-layout", lambda: self.auto_layout(self.views()[0].aspect()))
        menu.exec(event.screenPos())


class OperatorView(QGraphicsView):
    """Zoom (wheel), pan (middle button, or Space + drag), rubber-band selection and drops from the palette."""

    def __init__(self, scene: OperatorScene, parent=None):
        super().__init__(scene, parent)
        self.setRenderHints(
            QPainter.RenderHint.Antialiasing
            | QPainter.RenderHint.TextAntialiasing
            | QPainter.RenderHint.SmoothPixmapTransform
        )
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setAcceptDrops(True)
        self.setFrameShape(QGraphicsView.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._pan_from: QPointF | None = None
        self._space_held = False
        self._fit_pending = False

    @property
    def operator_scene(self) -> OperatorScene:
        return self.scene()

    # zoom and pan ---------------------------------------------------------------
    def zoom(self, factor: float) -> None:
        current = self.transform().m11()
        self._zoom_to(min(max(current * factor, MIN_ZOOM), MAX_ZOOM))

    def _zoom_to(self, zoom: float) -> None:
        self.setTransform(QTransform.fromScale(zoom, zoom))
        self.operator_scene.set_zoom(zoom)

    def fit_all(self, readable: bool = False) -> None:
        """The whole graph (Zoom to Fit). `readable` (opening a file): the whole graph if it fits
        at a readable zoom; else readable, from the input onwards (the rest is a scroll away)."""
        rect = self.operator_scene.nodes_rect()
        if rect.isNull():
            return
        margin = rect.adjusted(-FIT_MARGIN, -FIT_MARGIN, FIT_MARGIN, FIT_MARGIN)
        viewport = self.viewport().rect()
        fit = min(viewport.width() / margin.width(), viewport.height() / margin.height())
        zoom = min(max(fit, READABLE_ZOOM if readable else MIN_ZOOM), MAX_FIT_ZOOM)
        self._zoom_to(zoom)
        if fit >= zoom:
            self.centerOn(rect.center())
        else:  # from the top left, where the input is; centred on an axis that fits
            half_w, half_h = viewport.width() / zoom / 2, viewport.height() / zoom / 2
            x = rect.center().x() if margin.width() * zoom <= viewport.width() else margin.left() + half_w
            y = rect.center().y() if margin.height() * zoom <= viewport.height() else margin.top() + half_h
            self.centerOn(x, y)

    def aspect(self) -> float:
        """Width over height of what the view shows (the layout's rows suit it)."""
        viewport = self.viewport().rect()
        return viewport.width() / viewport.height() if viewport.height() > 0 else CANVAS_ASPECT

    def request_fit(self) -> None:
        """Fit the graph now, or as soon as the view has its real size."""
        self._fit_pending = True
        if self.isVisible():
            self.fit_all(readable=True)
            self._fit_pending = False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._fit_pending and self.isVisible():
            self.fit_all(readable=True)
            self._fit_pending = False

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.angleDelta().y():
            self.zoom(1.0015 ** event.angleDelta().y())
            event.accept()

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = True
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = False
            self.viewport().unsetCursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.MiddleButton or (
            event.button() == Qt.MouseButton.LeftButton and self._space_held
        ):
            self._pan_from = event.position()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - round(delta.x()))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - round(delta.y()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._pan_from is not None:
            self._pan_from = None
            if self._space_held:
                self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            else:
                self.viewport().unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    # drops from the palette -----------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if primitive_from_mime(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if primitive_from_mime(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        op = primitive_from_mime(event.mimeData())
        if not op:
            event.ignore()
            return
        self.operator_scene.add_primitive(op, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()
        self.setFocus()

    # background ---------------------------------------------------------------
    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        painter.fillRect(rect, QColor(theme.CANVAS_BG))
        if self.transform().m11() < 0.45:
            return
        step = GRID * 2
        painter.setPen(QPen(QColor(theme.GRID_DOT), 1.6 / self.transform().m11()))
        left, top = int(rect.left() // step) * step, int(rect.top() // step) * step
        points = [QPointF(x, y) for x in _frange(left, rect.right(), step) for y in _frange(top, rect.bottom(), step)]
        painter.drawPoints(points)


def _frange(start: float, stop: float, step: float):
    while start <= stop:
        yield start
        start += step


def _snap(p: QPointF) -> tuple[float, float]:
    return round(p.x() / GRID) * GRID, round(p.y() / GRID) * GRID


def canvas_actions(view: OperatorView, delete: Callable[[], None] | None = None) -> dict[str, QAction]:
    """Delete and zoom actions bound to a canvas, for the window's menus and toolbar (`delete`:
    what Delete does, if more than deleting the canvas's selection)."""
    scene = view.operator_scene
    spec = {
        "delete": (
            "Delete",
            "delete",
            [QKeySequence.StandardKey.Delete, QKeySequence(Qt.Key.Key_Backspace)],
            delete or scene.delete_selection,
        ),
        "select_all": ("Select All", None, [QKeySequence.StandardKey.SelectAll], scene.select_all),
        "zoom_in": (
            "Zoom In",
            "zoom-in",
            [QKeySequence.StandardKey.ZoomIn, QKeySequence("Ctrl+=")],
            lambda: view.zoom(1.25),
        ),
        "zoom_out": ("Zoom Out", "zoom-out", [QKeySequence.StandardKey.ZoomOut], lambda: view.zoom(0.8)),
        "zoom_fit": ("Zoom to Fit", "zoom-fit", [QKeySequence("Ctrl+0")], lambda: view.fit_all()),
        "layout": (
            "Auto-layout",
            "layout",
            [QKeySequence("Ctrl+L")],
            lambda: (scene.auto_layout(view.aspect()), view.fit_all()),
        ),
    }
    actions = {}
    for key, (text, icon_name, shortcuts, slot) in spec.items():
        action = QAction(text, view)
        if icon_name:
            action.setIcon(theme.icon(icon_name))
            action.setProperty(ICON_PROPERTY, icon_name)  # the window draws it again in another theme
        action.setShortcuts(shortcuts)
        action.triggered.connect(slot)
        actions[key] = action
    return actions
