"""The live Pareto plot: every result as a point (x and y chosen from the objective
columns, each optionally logarithmic), coloured by origin, with the non-dominated front
as a staircase. Hover names a point, click selects it, double-click opens it in the
editor, Shift+drag (or Select mode) selects a rectangle of points. A result whose timing is in
doubt is drawn hollow and, where an axis is timed, left off the front unless the user asks
(the ⚠ button: core.store.pareto).

Until the user picks axes, they are accuracy against tuned end-to-end speedup once a result
has both (the question the discovery loop answers; the original network of each run is a
star at 1x and its own accuracy), and otherwise the pair that shows the most results. An
axis fits its quantity: accuracy is linear within 0..1, costs and times logarithmic.

One ScatterPlotItem holds the markers; its point data are result ids. At 10^5
results only one marker per few-pixel cell and origin is drawn (core.store.plot_thinning)
while the frame keeps every point for picking. A new batch extends the front and the markers
without touching the view range, so the user's zoom stays where it was. Its parts live beside it:
plot_toolbar, plot_axes, plot_items, hover_card, reference_marks and plot_clicks."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from core.store import MINIMIZE
from core.store.arrays import isin
from core.store.pareto import TIMED_OBJECTIVES, front_of, staircase
from core.store.plot_thinning import Thinning

from .. import theme
from ..result_columns import BY_KEY, origin_color
from .hover_card import HoverCard
from .plot_axes import DEFAULT_AXES, coords, count_pairs, default_axes, view_limits
from .plot_clicks import clicked
from .plot_items import MARKER_SIZE, SelectingViewBox, ThinnedMarkers, marker_style
from .plot_toolbar import PlotToolbar
from .plots import ColumnAxis, plot_widget
from .reference_marks import ReferenceMarks
from .selection import ResultSelection
from .session import ExplorerSession

MARGIN = 0.25  # markers are placed this far (fraction of the view) beyond its edges
PICK_RADIUS_PX = 8.0
RETHIN_DELAY_MS = 60  # after the view stops moving


class ParetoPlot(QWidget):
    pointActivated = Signal(int)  # result id double-clicked: open it in the editor
    frontChanged = Signal(object, str, str)  # ids on the front (best x first), x column, y column

    def __init__(self, session: ExplorerSession, selection: ResultSelection, parent=None):
        super().__init__(parent)
        self.session, self.selection = session, selection
        self.x_key, self.y_key = "latency_ms", "flops"
        self.log = [True, True]
        self.hidden_origins: set[str] = set()
        #: the results the browser's filter matches, sorted (None: no filter, every result)
        self.filtered: np.ndarray | None = None
        self._user_axes = False  # the user picked axes: never change them automatically
        self._thinning = Thinning()
        self._selection_thinning = Thinning()
        self._px = self._py = np.empty(0)
        self._ok = np.empty(0, bool)
        self._front = np.empty(0, np.intp)
        self._front_shown: tuple[tuple[int, ...], str, str] | None = None  # (ids, x, y) of the last frontChanged
        self._drawn = np.empty(0, np.intp)
        self._brushes = np.empty(0, object)
        self._pens = np.empty(0, object)  # per origin: the outline of a hollow (in doubt) marker
        self._doubt = np.empty(0, bool)  # per frame row: its timing is in doubt
        self.doubtful_on_front = False  # the user asked to rank results whose timing is in doubt
        self._pair_counts = np.zeros(len(DEFAULT_AXES), np.int64)  # results each default pair shows

        self.toolbar = PlotToolbar(self)
        self._build_plot()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        stack = QGridLayout()
        stack.addWidget(self.plot, 0, 0)
        stack.addWidget(self.empty_label, 0, 0, Qt.AlignmentFlag.AlignCenter)
        layout.addLayout(stack, 1)

        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(RETHIN_DELAY_MS)
        self._redraw_timer.timeout.connect(self.redraw)
        self.viewbox.sigRangeChanged.connect(lambda *_: self._redraw_timer.start())
        self.viewbox.sigResized.connect(lambda *_: self._redraw_timer.start())
        self.viewbox.rectSelected.connect(self._rect_selected)
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self.plot.viewport().installEventFilter(self)  # the hover card leaves with the mouse
        self.plot.scene().sigMouseClicked.connect(lambda event: clicked(self, event))
        session.resultsReset.connect(self.rebuild)
        session.resultsAdded.connect(self.extend)
        session.resultsRemoved.connect(self._removed)
        selection.changed.connect(self._show_selection)
        selection.currentChanged.connect(lambda _: self._show_selection(None))
        # the points are drawn by rebuild(), the next thing its owner calls

    # -- the plot ------------------------------------------------------------------------
    def _build_plot(self) -> None:
        self.viewbox = SelectingViewBox()
        self.axes = {side: ColumnAxis(side) for side in ("left", "bottom")}
        self.plot = plot_widget(viewBox=self.viewbox, axisItems=self.axes, parent=self)
        item = self.plot.getPlotItem()
        self.front_line = pg.PlotCurveItem(pen=pg.mkPen(theme.TEXT, width=1.6), antialias=True)
        self.markers = ThinnedMarkers(size=MARKER_SIZE, pen=pg.mkPen(255, 255, 255, 200, width=0.8), pxMode=True)
        self.front_markers = pg.ScatterPlotItem(
            size=MARKER_SIZE + 4, pen=pg.mkPen(theme.TEXT, width=1.4), brush=None, pxMode=True
        )
        self.selected_markers = pg.ScatterPlotItem(
            size=MARKER_SIZE + 6, brush=None, pxMode=True, pen=pg.mkPen(theme.SELECTION, width=2)
        )
        self.current_marker = pg.ScatterPlotItem(
            size=MARKER_SIZE + 12,
            brush=pg.mkBrush(37, 99, 235, 40),
            pen=pg.mkPen(theme.SELECTION, width=2.5),
            pxMode=True,
        )
        self.card = HoverCard(self)
        self.reference = ReferenceMarks()
        for z, it in enumerate(
            (
                self.markers,
                self.front_line,
                self.front_markers,
                self.selected_markers,
                self.current_marker,
                self.card.marker,
                self.reference.star,
            )
        ):
            it.setZValue(z)
            item.addItem(it)
        item.addItem(self.card.label, ignoreBounds=True)
        item.addItem(self.reference.label, ignoreBounds=True)
        item.addItem(self.reference.parity_line, ignoreBounds=True)
        self.empty_label = QLabel(self)
        self.empty_label.setObjectName("hint")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)

    # -- axes ----------------------------------------------------------------------------------
    def set_axes(self, x_key: str, y_key: str, log_x: bool | None = None, log_y: bool | None = None) -> None:
        """Show x_key against y_key (columns of columns.AXES); the view fits the data again."""
        self.x_key, self.y_key = x_key, y_key
        self._user_axes = True
        for i, log in enumerate((log_x, log_y)):
            if log is not None:
                self.log[i] = log
        self.toolbar.show_axes((x_key, y_key), self.log)
        self.rebuild()
        self.fit()

    def set_log(self, axis: int, on: bool) -> None:
        self.log[axis] = on
        self._user_axes = True
        self.rebuild()
        self.fit()

    def axis_chosen(self, axis: int) -> None:
        """A column picked for one axis: the axis takes that quantity's scale (accuracy linear
        within 0..1, FLOPs logarithmic, ...); the other axis stays as it is."""
        keys, logs = [self.x_key, self.y_key], list(self.log)
        keys[axis] = self.toolbar.axis_combos[axis].currentData()
        logs[axis] = BY_KEY[keys[axis]].log
        self.set_axes(keys[0], keys[1], logs[0], logs[1])

    def _choose_default_axes(self) -> None:
        self.x_key, self.y_key = default_axes(self._pair_counts, (self.x_key, self.y_key))
        self.log = [BY_KEY[self.x_key].log, BY_KEY[self.y_key].log]
        self.toolbar.show_axes((self.x_key, self.y_key), self.log)

    @property
    def directions(self) -> tuple[str, str]:
        x, y = (BY_KEY[k].direction or MINIMIZE for k in (self.x_key, self.y_key))
        return x, y

    def fit(self) -> None:
        """Frame every point and follow new results until the user zooms or pans."""
        self.viewbox.enableAutoRange()

    # -- data ----------------------------------------------------------------------------------
    def _shown_codes(self) -> np.ndarray:
        frame = self.session.frame
        return np.array([o not in self.hidden_origins for o in frame.origins] or [True], bool)

    def _passes_filter(self, ids: np.ndarray) -> np.ndarray | bool:
        return True if self.filtered is None else isin(ids, self.filtered)

    def show_filtered(self, ids: np.ndarray | None) -> None:
        """Plot only the results `ids` (the browser's filter), or all of them (None)."""
        ids = None if ids is None else np.sort(np.asarray(ids, dtype=np.int64))
        same = (ids is None and self.filtered is None) or (
            ids is not None and self.filtered is not None and np.array_equal(ids, self.filtered)
        )
        if not same:
            self.filtered = ids
            self.rebuild()

    def rebuild(self) -> None:
        """Everything again from the frame (first load, axes, deletions, origin toggles)."""
        frame = self.session.frame
        self.card.hide()
        self._pair_counts = count_pairs(frame.values, frame.alive)
        if not self._user_axes:
            self._choose_default_axes()
        self._px = coords(frame.values[self.x_key], self.log[0])
        self._py = coords(frame.values[self.y_key], self.log[1])
        self._ok = (
            np.isfinite(self._px)
            & np.isfinite(self._py)
            & self._shown_codes()[frame.origin_codes]
            & frame.alive
            & self._passes_filter(frame.ids)
        )
        self._brushes = np.array([pg.mkBrush(origin_color(o, frame.origins)) for o in frame.origins], object)
        self._pens = np.array([pg.mkPen(origin_color(o, frame.origins), width=1.6) for o in frame.origins], object)
        self._doubt = frame.values["in_doubt"] == 1
        candidates = np.flatnonzero(self._ok)
        self._front = front_of(self._px, self._py, self.directions, self._rankable(candidates))
        self._set_bounds(candidates, reset=True)
        self.plot.getPlotItem().setLabel("bottom", BY_KEY[self.x_key].axis)
        self.plot.getPlotItem().setLabel("left", BY_KEY[self.y_key].axis)
        limits = {}
        for side, name, key, log in (("bottom", "x", self.x_key, self.log[0]), ("left", "y", self.y_key, self.log[1])):
            self.axes[side].show_column(BY_KEY[key], log)
            limits[f"{name}Min"], limits[f"{name}Max"] = view_limits(BY_KEY[key], log)
        self.viewbox.setLimits(**limits)
        self.reference.draw(self.session, (self.x_key, self.y_key), self.log)
        self._draw_front()
        self._thinning.reset()
        self.redraw()
        self._show_selection(None)
        self._refresh_labels()

    def extend(self, added: slice) -> None:
        """New rows at the end of the frame: extend the front and the markers only."""
        frame = self.session.frame
        self._pair_counts += count_pairs(frame.values, added)
        if (
            len(self._brushes) < len(frame.origins)
            or len(self._px) != added.start
            or not (
                self._user_axes or default_axes(self._pair_counts, (self.x_key, self.y_key)) == (self.x_key, self.y_key)
            )
        ):
            self.rebuild()  # a new origin needs a colour; default axes follow what the results show
            return
        new = np.arange(added.start, added.stop)
        px = coords(frame.values[self.x_key][added], self.log[0])
        py = coords(frame.values[self.y_key][added], self.log[1])
        ok = (
            np.isfinite(px)
            & np.isfinite(py)
            & self._shown_codes()[frame.origin_codes[added]]
            & self._passes_filter(frame.ids[added])
        )
        self._px, self._py = np.concatenate([self._px, px]), np.concatenate([self._py, py])
        self._ok = np.concatenate([self._ok, ok])
        self._doubt = np.concatenate([self._doubt, frame.values["in_doubt"][added] == 1])
        candidates = new[ok]
        self._front = front_of(
            self._px, self._py, self.directions, np.concatenate([self._front, self._rankable(candidates)])
        )
        self._draw_front()
        fresh = self._thinning.extend(self._px, self._py, frame.origin_codes, candidates)
        if len(fresh):
            self.markers.addPoints(
                x=self._px[fresh],
                y=self._py[fresh],
                data=frame.ids[fresh],
                **self._marker_style(fresh),
            )
            self._drawn = np.concatenate([self._drawn, fresh])
        self._set_bounds(candidates)
        self.reference.draw(
            self.session, (self.x_key, self.y_key), self.log
        )  # a run's original network may have been trained meanwhile
        self._refresh_labels()

    def _removed(self, rows: np.ndarray) -> None:
        """Results that went away: redraw only if one of them was drawn or on the front."""
        self._pair_counts -= count_pairs(self.session.frame.values, rows)
        visible = isin(rows, self._drawn).any() or isin(rows, self._front).any()
        self._ok[rows] = False
        if visible:
            self.rebuild()
        else:
            self._refresh_labels()

    def _set_bounds(self, candidates: np.ndarray, reset: bool = False) -> None:
        if len(candidates):
            new = (
                (float(self._px[candidates].min()), float(self._px[candidates].max())),
                (float(self._py[candidates].min()), float(self._py[candidates].max())),
            )
            old = None if reset else self.markers.full_bounds
            self.markers.full_bounds = new if old is None else (_union(old[0], new[0]), _union(old[1], new[1]))
        elif reset:
            self.markers.full_bounds = None
        self.markers.informViewBoundsChanged()

    def _draw_front(self) -> None:
        xs, ys = self._px[self._front], self._py[self._front]
        sx, sy = staircase(xs, ys, self.directions[0])
        self.front_line.setData(sx, sy)
        self.front_markers.setData(x=xs, y=ys, data=self.session.frame.ids[self._front])
        shown = (tuple(self.front_ids().tolist()), self.x_key, self.y_key)
        if shown != self._front_shown:
            self._front_shown = shown
            self.frontChanged.emit(self.front_ids(), self.x_key, self.y_key)

    def front_ids(self) -> np.ndarray:
        """Result ids on the front, best x first."""
        ids = self.session.frame.ids[self._front]
        return ids if self.directions[0] == MINIMIZE else ids[::-1]

    @property
    def redraw_pending(self) -> bool:
        return self._redraw_timer.isActive()

    def redraw(self) -> None:
        """Choose the markers for the current view (after it moved, or on rebuild)."""
        frame = self.session.frame
        area, pixel = self._view_area()
        candidates = np.flatnonzero(self._ok)
        if area is None or not len(candidates):
            self._drawn = candidates[:0]
            self._thinning.reset()
        else:
            self._drawn = self._thinning.full(self._px, self._py, frame.origin_codes, candidates, area, pixel)
        self.markers.setData(
            x=self._px[self._drawn],
            y=self._py[self._drawn],
            data=frame.ids[self._drawn],
            **self._marker_style(self._drawn),
        )

    def _marker_style(self, rows: np.ndarray) -> dict:
        return marker_style(self.session.frame.origin_codes[rows], self._doubt[rows], self._brushes, self._pens)

    def _rankable(self, rows: np.ndarray) -> np.ndarray:
        """Of `rows`, those that may stand on the front: all, unless an axis is timed and the user
        has not asked for results whose timing is in doubt (core.store.pareto)."""
        if self.doubtful_on_front or not TIMED_OBJECTIVES.intersection((self.x_key, self.y_key)):
            return rows
        return rows[~self._doubt[rows]]

    def set_doubtful_on_front(self, on: bool) -> None:
        """Rank results whose timing is in doubt on the front too (on), or leave them off."""
        if on != self.doubtful_on_front:
            self.doubtful_on_front = on
            self.toolbar.doubt_button.setChecked(on)
            self.rebuild()

    def _view_area(self):
        (x0, x1), (y0, y1) = self.viewbox.viewRange()
        pw, ph = self.viewbox.viewPixelSize()
        if not (np.isfinite([pw, ph]).all() and pw > 0 and ph > 0):
            return None, None
        mx, my = (x1 - x0) * MARGIN, (y1 - y0) * MARGIN
        return (x0 - mx, x1 + mx, y0 - my, y1 + my), (pw, ph)

    def _refresh_labels(self) -> None:
        frame = self.session.frame
        shown, total = int(self._ok.sum()), frame.count
        filtered = f" · filter: {len(self.filtered):,} match" if self.filtered is not None else ""
        self.toolbar.summary.setText(
            f"{total:,} results{filtered} · {shown:,} plotted · {len(self._front)} on the front" if total else ""
        )
        if not total:
            self.empty_label.setText(
                "No results yet.\nOpen an operator and press Tune (Ctrl+T), or queue one with `tessera submit`."
            )
        elif not shown and self.filtered is not None:
            self.empty_label.setText("No result matching the filter has a value on both axes.")
        elif not shown:
            self.empty_label.setText(
                f"No result has both {BY_KEY[self.x_key].axis} and "
                f"{BY_KEY[self.y_key].axis}" + (" (> 0 on a log axis)." if any(self.log) else ".")
            )
        self.empty_label.setVisible(not shown)
        self.toolbar.show_origins(frame.origin_counts(), frame.origins, self.hidden_origins)

    def show_origin(self, origin: str, shown: bool) -> None:
        (self.hidden_origins.discard if shown else self.hidden_origins.add)(origin)
        self.rebuild()

    # -- selection -------------------------------------------------------------------------------
    def _show_selection(self, source) -> None:
        frame = self.session.frame
        at = frame.positions(self.selection.ids)
        at = at[self._ok[at]]
        area, pixel = self._view_area()
        if len(at) > self._selection_thinning.limit and area is not None:
            at = self._selection_thinning.full(self._px, self._py, frame.origin_codes, at, area, pixel)
        self.selected_markers.setData(x=self._px[at], y=self._py[at], data=frame.ids[at])
        current = frame.positions([self.selection.current] if self.selection.current is not None else [])
        current = current[self._ok[current]]
        self.current_marker.setData(x=self._px[current], y=self._py[current])

    def _rect_selected(self, rect: QRectF, modifiers) -> None:
        candidates = np.flatnonzero(self._ok)
        x, y = self._px[candidates], self._py[candidates]
        inside = (x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom())
        ids = self.session.frame.ids[candidates[inside]]
        if modifiers & Qt.KeyboardModifier.ControlModifier:
            ids = np.union1d(self.selection.ids, ids)
        self.selection.set(ids, source=self)

    def point_at(self, scene_pos: QPointF) -> int | None:
        """Row of the frame nearest to a scene position, within PICK_RADIUS_PX, or None."""
        if not self.viewbox.sceneBoundingRect().contains(scene_pos):
            return None
        candidates = np.flatnonzero(self._ok)
        pw, ph = self.viewbox.viewPixelSize()
        if not len(candidates) or not (pw > 0 and ph > 0):
            return None
        p = self.viewbox.mapSceneToView(scene_pos)
        d2 = ((self._px[candidates] - p.x()) / pw) ** 2 + ((self._py[candidates] - p.y()) / ph) ** 2
        best = int(np.argmin(d2))
        return int(candidates[best]) if d2[best] <= PICK_RADIUS_PX**2 else None

    def scene_position(self, result_id: int) -> QPointF | None:
        """Where a result's point is drawn, in scene coordinates (None if it is not plotted)."""
        at = self.session.frame.positions([result_id])
        if not len(at) or not self._ok[at[0]]:
            return None
        return self.viewbox.mapViewToScene(QPointF(self._px[at[0]], self._py[at[0]]))

    # -- hover ----------------------------------------------------------------------------------------
    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.card.hide()
        return False

    def _hover(self, scene_pos: QPointF) -> None:
        row = self.point_at(scene_pos)
        if row is None:
            self.card.hide()
        else:
            self.card.show(int(self.session.frame.ids[row]), float(self._px[row]), float(self._py[row]))


def _union(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The span covering both spans (the markers' bounds grow as results arrive)."""
    return min(a[0], b[0]), max(a[1], b[1])
