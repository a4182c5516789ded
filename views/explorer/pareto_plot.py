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
without touching the view range, so the user's zoom stays where it was."""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QMenu, QToolButton, QVBoxLayout, QWidget

from core.store import MINIMIZE
from core.store.arrays import isin
from core.store.pareto import TIMED_OBJECTIVES, front_of, staircase
from core.store.plot_thinning import Thinning

from .. import theme
from ..result_columns import AXES, BY_KEY, DOUBT, Column, cell_text, origin_color
from . import style
from .plots import ColumnAxis, plot_widget
from .selection import ResultSelection
from .session import ExplorerSession

MARGIN = 0.25  # markers are placed this far (fraction of the view) beyond its edges
PICK_RADIUS_PX = 8.0
RETHIN_DELAY_MS = 60  # after the view stops moving
MARKER_SIZE = 7
AXIS_TITLE_CHARS = 22  # the axis boxes' width in characters; longer titles show whole in the open list
NO_LIMIT = 1e307  # a view limit that limits nothing (pyqtgraph's default)
#: axes shown until the user picks some: the first if any result has both (tuned end-to-end
#: results), else the pair with the most results (the first of equals)
DEFAULT_AXES = (
    ("e2e_speedup", "accuracy"),
    ("latency_ms", "accuracy"),
    ("latency_ms", "fisher_potential"),
    ("latency_ms", "flops"),
    ("flops", "accuracy"),
    ("flops", "fisher_potential"),
    ("flops", "params"),
)
SPEEDUPS_FOR_DEFAULT = 3  # results with accuracy and a tuned speedup before those axes are the default
HOVER_FIELDS = ("latency_ms", "gflops", "flops", "params", "speedup", "accuracy", "fisher_potential", "e2e_speedup")


class _ViewBox(pg.ViewBox):
    """Left-drag pans; Shift+left-drag, or any left-drag in select mode, draws a rubber band."""

    rectSelected = Signal(QRectF, object)  # plot coordinates, Qt.KeyboardModifier

    def __init__(self):
        super().__init__(enableMenu=False, defaultPadding=0.04)
        self.select_mode = False

    def mouseDragEvent(self, ev, axis=None):
        selecting = (
            ev.button() == Qt.MouseButton.LeftButton
            and axis is None
            and (self.select_mode or ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        )
        if not selecting:
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        if ev.isFinish():
            self.rbScaleBox.hide()
            rect = QRectF(QPointF(ev.buttonDownPos(ev.button())), QPointF(ev.pos()))
            self.rectSelected.emit(self.childGroup.mapRectFromParent(rect).normalized(), ev.modifiers())
        else:
            self.updateScaleBox(ev.buttonDownPos(), ev.pos())


class _Markers(pg.ScatterPlotItem):
    """Draws only the thinned markers but reports the bounds of every point, so that
    auto-range (until the user zooms) frames all results."""

    def __init__(self, **options):
        super().__init__(**options)
        self.full_bounds: tuple[tuple[float, float], tuple[float, float]] | None = None

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return (None, None) if self.full_bounds is None else self.full_bounds[ax]


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
        self._hover_rows: dict[int, dict] = {}
        self._pair_counts = np.zeros(len(DEFAULT_AXES), np.int64)  # results each default pair shows
        self.hovered: int | None = None

        self._build_toolbar()
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
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        session.resultsReset.connect(self.rebuild)
        session.resultsAdded.connect(self.extend)
        session.resultsRemoved.connect(self._removed)
        session.resultsReset.connect(self._hover_rows.clear)
        session.operatorsRenamed.connect(self._hover_rows.clear)
        selection.changed.connect(self._show_selection)
        selection.currentChanged.connect(lambda _: self._show_selection(None))
        # the points are drawn by rebuild(), the next thing its owner calls

    # -- widgets ------------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        """Two rows: the axes and the view tools; the origins (as toggles) and the counts."""
        self.toolbar = QWidget(self)  # made in place: moving a made tree of widgets restyles all of it
        self.toolbar.setObjectName("explorerBar")
        self.toolbar.setStyleSheet(theme.style_sheet(style.BAR))
        rows = QVBoxLayout(self.toolbar)
        rows.setContentsMargins(10, 6, 10, 4)
        rows.setSpacing(4)
        bar = QHBoxLayout()
        bar.setSpacing(6)
        self.axis_combos, self.log_buttons = [], []
        for i, title in enumerate(("X", "Y")):
            label = QLabel(title)
            label.setObjectName("barLabel")
            combo = QComboBox()
            # as wide as its longest title allows, not wider: the page fits a 1280x720 screen
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(AXIS_TITLE_CHARS)
            for column in AXES:
                combo.addItem(column.axis or column.title, column.key)
                combo.setItemData(combo.count() - 1, column.axis, Qt.ItemDataRole.ToolTipRole)
            combo.setCurrentIndex(combo.findData((self.x_key, self.y_key)[i]))
            combo.activated.connect(lambda _=0, i=i: self._axis_chosen(i))
            log = QToolButton()
            log.setText("log")
            log.setCheckable(True)
            log.setChecked(self.log[i])
            log.setToolTip(f"Logarithmic {title} axis")
            log.toggled.connect(lambda on, i=i: self.set_log(i, on))
            bar.addWidget(label)
            bar.addWidget(combo)
            bar.addWidget(log)
            bar.addSpacing(10)
            self.axis_combos.append(combo)
            self.log_buttons.append(log)
        bar.addStretch(1)
        self.select_button = QToolButton()
        self.select_button.setText("Select")
        self.select_button.setCheckable(True)
        self.select_button.setToolTip("Drag to select a rectangle of points (or hold Shift while dragging)")
        self.select_button.toggled.connect(lambda on: setattr(self.viewbox, "select_mode", on))
        fit = QToolButton()
        fit.setText("Fit")
        fit.setToolTip("Show every result and follow new ones again")
        fit.clicked.connect(self.fit)
        self.doubt_button = QToolButton()
        self.doubt_button.setText(DOUBT.strip())
        self.doubt_button.setCheckable(True)
        self.doubt_button.setToolTip(
            "Rank results whose timing is in doubt (hollow markers) on the front too; "
            "they are left off a front of timed values otherwise"
        )
        self.doubt_button.toggled.connect(self.set_doubtful_on_front)
        bar.addWidget(self.select_button)
        bar.addWidget(self.doubt_button)
        bar.addWidget(fit)
        self.legend = QHBoxLayout()
        self.legend.setSpacing(2)
        self.summary = QLabel()
        self.summary.setObjectName("hint")
        self.summary.setWordWrap(True)
        second = QHBoxLayout()
        second.addLayout(self.legend)
        second.addStretch(1)
        second.addWidget(self.summary)
        rows.addLayout(bar)
        rows.addLayout(second)
        self._legend_buttons: dict[str, QToolButton] = {}

    def _build_plot(self) -> None:
        self.viewbox = _ViewBox()
        self.axes = {side: ColumnAxis(side) for side in ("left", "bottom")}
        self.plot = plot_widget(viewBox=self.viewbox, axisItems=self.axes, parent=self)
        item = self.plot.getPlotItem()
        self.front_line = pg.PlotCurveItem(pen=pg.mkPen(theme.TEXT, width=1.6), antialias=True)
        self.markers = _Markers(size=MARKER_SIZE, pen=pg.mkPen(255, 255, 255, 200, width=0.8), pxMode=True)
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
        self.hover_marker = pg.ScatterPlotItem(
            size=MARKER_SIZE + 8, brush=None, pxMode=True, pen=pg.mkPen(theme.TEXT, width=1.5)
        )
        card = QColor(theme.CARD_BG)
        card.setAlpha(235)
        self.hover_label = pg.TextItem(color=theme.TEXT, fill=pg.mkBrush(card), border=pg.mkPen(theme.CARD_BORDER))
        self.hover_label.setZValue(100)
        self.hover_label.hide()
        self.reference = pg.ScatterPlotItem(
            symbol="star", size=MARKER_SIZE + 11, brush=pg.mkBrush(theme.TEXT), pen=pg.mkPen(theme.CARD_BG), pxMode=True
        )
        self.reference_label = pg.TextItem("original network", color=theme.TEXT_MUTED, anchor=(-0.12, 1.1))
        self.parity_line = pg.InfiniteLine(pen=pg.mkPen(theme.TEXT_MUTED, width=1, style=Qt.PenStyle.DashLine))
        self.parity_line.setToolTip("As fast as the original network (1x)")
        for z, it in enumerate(
            (
                self.markers,
                self.front_line,
                self.front_markers,
                self.selected_markers,
                self.current_marker,
                self.hover_marker,
                self.reference,
            )
        ):
            it.setZValue(z)
            item.addItem(it)
        item.addItem(self.hover_label, ignoreBounds=True)
        item.addItem(self.reference_label, ignoreBounds=True)
        item.addItem(self.parity_line, ignoreBounds=True)
        self.empty_label = QLabel(self)
        self.empty_label.setObjectName("hint")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)

    # -- axes ----------------------------------------------------------------------------------
    def set_axes(self, x_key: str, y_key: str, log_x: bool | None = None, log_y: bool | None = None) -> None:
        """Show x_key against y_key (columns of columns.AXES); the view fits the data again."""
        self.x_key, self.y_key = x_key, y_key
        self._user_axes = True
        for i, (key, log) in enumerate(((x_key, log_x), (y_key, log_y))):
            self.axis_combos[i].setCurrentIndex(self.axis_combos[i].findData(key))
            if log is not None:
                self.log[i] = log
                self.log_buttons[i].blockSignals(True)
                self.log_buttons[i].setChecked(log)
                self.log_buttons[i].blockSignals(False)
        self.rebuild()
        self.fit()

    def set_log(self, axis: int, on: bool) -> None:
        self.log[axis] = on
        self._user_axes = True
        self.rebuild()
        self.fit()

    def _axis_chosen(self, axis: int) -> None:
        """A column picked for one axis: the axis takes that quantity's scale (accuracy linear
        within 0..1, FLOPs logarithmic, ...); the other axis stays as it is."""
        keys, logs = [self.x_key, self.y_key], list(self.log)
        keys[axis] = self.axis_combos[axis].currentData()
        logs[axis] = BY_KEY[keys[axis]].log
        self.set_axes(keys[0], keys[1], logs[0], logs[1])

    def default_axes(self) -> tuple[str, str]:
        """Accuracy against tuned end-to-end speedup once a few results have both (a front of
        one point answers nothing); before that the pair of DEFAULT_AXES that shows the most
        results (the current pair if none shows any)."""
        counts = self._pair_counts
        if counts[0] >= SPEEDUPS_FOR_DEFAULT:
            return DEFAULT_AXES[0]
        return DEFAULT_AXES[int(np.argmax(counts))] if counts.any() else (self.x_key, self.y_key)

    def _count_pairs(self, rows) -> np.ndarray:
        """How many of the frame's `rows` each pair of DEFAULT_AXES would show (at its own scales)."""
        values = self.session.frame.values
        return np.array(
            [
                np.count_nonzero(
                    np.isfinite(_coords(values[x][rows], BY_KEY[x].log))
                    & np.isfinite(_coords(values[y][rows], BY_KEY[y].log))
                )
                for x, y in DEFAULT_AXES
            ]
        )

    def _choose_default_axes(self) -> None:
        self.x_key, self.y_key = self.default_axes()
        self.log = [BY_KEY[self.x_key].log, BY_KEY[self.y_key].log]
        for i, key in enumerate((self.x_key, self.y_key)):
            self.axis_combos[i].setCurrentIndex(self.axis_combos[i].findData(key))
            self.log_buttons[i].blockSignals(True)
            self.log_buttons[i].setChecked(self.log[i])
            self.log_buttons[i].blockSignals(False)

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
        self._hide_hover()
        self._pair_counts = self._count_pairs(frame.alive)
        if not self._user_axes:
            self._choose_default_axes()
        self._px = _coords(frame.values[self.x_key], self.log[0])
        self._py = _coords(frame.values[self.y_key], self.log[1])
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
            limits[f"{name}Min"], limits[f"{name}Max"] = _limits(BY_KEY[key], log)
        self.viewbox.setLimits(**limits)
        self._draw_reference()
        self._draw_front()
        self._thinning.reset()
        self.redraw()
        self._show_selection(None)
        self._refresh_labels()

    def extend(self, added: slice) -> None:
        """New rows at the end of the frame: extend the front and the markers only."""
        frame = self.session.frame
        self._pair_counts += self._count_pairs(added)
        if (
            len(self._brushes) < len(frame.origins)
            or len(self._px) != added.start
            or not (self._user_axes or self.default_axes() == (self.x_key, self.y_key))
        ):
            self.rebuild()  # a new origin needs a colour; default axes follow what the results show
            return
        new = np.arange(added.start, added.stop)
        px = _coords(frame.values[self.x_key][added], self.log[0])
        py = _coords(frame.values[self.y_key][added], self.log[1])
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
        self._draw_reference()  # a run's original network may have been trained meanwhile
        self._refresh_labels()

    def _removed(self, rows: np.ndarray) -> None:
        """Results that went away: redraw only if one of them was drawn or on the front."""
        self._pair_counts -= self._count_pairs(rows)
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

    def _draw_reference(self) -> None:
        """The original network of each discovery run where both axes have a value for it (1x
        its own speed, the proxy accuracy it was trained to), and the 1x line on a speedup axis."""
        points = set()
        if self.x_key in REFERENCE and self.y_key in REFERENCE:
            for run in self.session.runs():
                if run.baseline_accuracy is not None:
                    points.add((REFERENCE[self.x_key](run), REFERENCE[self.y_key](run)))
        x = _coords(np.array([p[0] for p in points], float), self.log[0])
        y = _coords(np.array([p[1] for p in points], float), self.log[1])
        self.reference.setData(x=x, y=y)
        self.reference_label.setVisible(len(x) > 0)
        if len(x):
            self.reference_label.setPos(float(x[0]), float(y[0]))
        speedup_axis = [key == "e2e_speedup" for key in (self.x_key, self.y_key)]
        self.parity_line.setVisible(any(speedup_axis))
        if any(speedup_axis):
            axis = speedup_axis.index(True)
            self.parity_line.setAngle(90 if axis == 0 else 0)
            self.parity_line.setValue(0.0 if self.log[axis] else 1.0)

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
        """Markers filled in their origin's colour; hollow, outlined in it, where the timing is in doubt."""
        codes = self.session.frame.origin_codes[rows]
        doubt = self._doubt[rows]
        outline = pg.mkPen(255, 255, 255, 200, width=0.8)
        return {
            "brush": [None if d else b for d, b in zip(doubt, self._brushes[codes])],
            "pen": [p if d else outline for d, p in zip(doubt, self._pens[codes])],
        }

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
            self.doubt_button.setChecked(on)
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
        self.summary.setText(
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
        counts = frame.origin_counts()
        for origin, count in counts.items():
            button = self._legend_buttons.get(origin)
            if button is None:
                button = self._legend_buttons[origin] = QToolButton()
                button.setCheckable(True)
                button.setProperty("chip", True)
                button.setChecked(origin not in self.hidden_origins)
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
                button.setIcon(theme.dot_icon(origin_color(origin, frame.origins)))
                button.setToolTip(f"Show or hide the results of {origin}")
                button.toggled.connect(lambda on, o=origin: self.show_origin(o, on))
                self.legend.addWidget(button)
            button.setText(f"{origin} {count:,}")
        for origin, button in self._legend_buttons.items():
            button.setVisible(origin in counts)

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

    def _clicked(self, event) -> None:
        row = self.point_at(event.scenePos())
        ids = self.session.frame.ids
        if event.button() == Qt.MouseButton.RightButton:
            self._context_menu(event, None if row is None else int(ids[row]))
            return
        if event.button() != Qt.MouseButton.LeftButton:
            return
        if event.double():
            if row is not None:
                self.pointActivated.emit(int(ids[row]))
            return
        toggle = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if row is None:
            if not toggle and self.viewbox.sceneBoundingRect().contains(event.scenePos()):
                self.selection.clear(self)
            return
        result_id = int(ids[row])
        if toggle:
            chosen = self.selection.ids
            chosen = chosen[chosen != result_id] if result_id in chosen else np.append(chosen, result_id)
            self.selection.set(chosen, source=self, current=result_id)
        else:
            self.selection.set([result_id], source=self, current=result_id)

    def _context_menu(self, event, result_id: int | None) -> None:
        menu = QMenu(self)
        if result_id is not None:
            menu.addAction("Open in Editor", lambda: self.pointActivated.emit(result_id))
            menu.addSeparator()
        menu.addAction("Fit All", self.fit)
        menu.addAction("Clear Selection", lambda: self.selection.clear(self)).setEnabled(len(self.selection) > 0)
        menu.popup(event.screenPos().toPoint())

    # -- hover ----------------------------------------------------------------------------------------
    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Leave:
            self._hide_hover()
        return False

    def _hide_hover(self) -> None:
        self.hovered = None
        self.hover_label.hide()
        self.hover_marker.setData([], [])

    def _hover(self, scene_pos: QPointF) -> None:
        row = self.point_at(scene_pos)
        if row is None:
            self._hide_hover()
            return
        result_id = int(self.session.frame.ids[row])
        x, y = float(self._px[row]), float(self._py[row])
        self.hover_marker.setData([x], [y])
        if result_id != self.hovered:
            self.hovered = result_id
            self.hover_label.setHtml(self.hover_html(result_id))
        (x0, x1), (y0, y1) = self.viewbox.viewRange()
        self.hover_label.setAnchor((1.0 if x > (x0 + x1) / 2 else 0.0, 0.0 if y > (y0 + y1) / 2 else 1.0))
        self.hover_label.setPos(x, y)
        self.hover_label.show()
        self._keep_card_inside()

    def _keep_card_inside(self) -> None:
        """Shift the hover card back inside the plot where it would cross an edge (a wide card
        beside a point near the right or top edge was cut: "not meas…")."""
        self.hover_label.updateTransform(force=True)  # pyqtgraph otherwise sizes it at the next paint
        box = self.viewbox.sceneBoundingRect().adjusted(3, 3, -3, -3)
        card = self.hover_label.mapRectToScene(self.hover_label.boundingRect())
        dx = max(box.left() - card.left(), 0.0) + min(box.right() - card.right(), 0.0)
        dy = max(box.top() - card.top(), 0.0) + min(box.bottom() - card.bottom(), 0.0)
        if dx or dy:
            at = self.viewbox.mapViewToScene(self.hover_label.pos()) + QPointF(dx, dy)
            self.hover_label.setPos(self.viewbox.mapSceneToView(at))

    def hover_html(self, result_id: int) -> str:
        row = self._hover_rows.get(result_id)
        if row is None:
            row = self._hover_rows[result_id] = self.session.row(result_id) or {}
        if not row:
            return f"result {result_id} (deleted)"
        name = html.escape(row["operator_name"] or f"operator {row['operator_id']}")
        color = origin_color(row["origin"] or "", self.session.frame.origins)
        facts = [
            BY_KEY["bindings"].text(row["bindings"]),
            row["device_name"] or "",
            "tuned" if row["tuned"] else "",
            "" if result_id > 0 else "not measured yet",
        ]
        lines = [
            f"<b>{name}</b> <span style='color:{color}'>● {html.escape(row['origin'] or '')}</span>",
            f"<span style='color:{theme.TEXT_MUTED}'>{html.escape(' · '.join(f for f in facts if f))}</span>",
        ]
        keys = [self.x_key, self.y_key] + [k for k in HOVER_FIELDS if k not in (self.x_key, self.y_key)]
        cells = [
            f"{BY_KEY[k].axis}: <b>{html.escape(cell_text(row, k))}</b>"
            if k in (self.x_key, self.y_key)
            else f"{BY_KEY[k].axis}: {html.escape(cell_text(row, k))}"
            for k in keys
            if row.get(k) is not None
        ]
        lines += cells
        if row.get("timing_note"):
            warning = theme.COLORS["warning_text"]
            lines.append(f"<span style='color:{warning}'>{DOUBT.strip()} {html.escape(row['timing_note'])}</span>")
        return f"<div style='color:{theme.TEXT}'>{'<br>'.join(lines)}</div>"


#: what the original network of a discovery run is on an axis: 1x its own speed, its accuracy
REFERENCE = {"e2e_speedup": lambda run: 1.0, "accuracy": lambda run: run.baseline_accuracy}


def _coords(values: np.ndarray, log: bool) -> np.ndarray:
    """Plot coordinates: the values, or their log10 (NaN where not > 0)."""
    if not log:
        return values.astype(float, copy=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values > 0, np.log10(values), np.nan)


def _limits(column: Column, log: bool) -> tuple[float, float]:
    """How far the view may go on an axis of `column`: within its bounds (accuracy 0..1);
    NO_LIMIT, pyqtgraph's own default, elsewhere."""
    low, high = column.bounds or (-NO_LIMIT, NO_LIMIT)
    if log:
        return -NO_LIMIT, (math.log10(high) if 0 < high < NO_LIMIT else NO_LIMIT)
    return low, high


def _union(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The span covering both spans (the markers' bounds grow as results arrive)."""
    return min(a[0], b[0]), max(a[1], b[1])
