"""The Pareto plot's hover card: the result under the mouse ringed and named with its figures
(the plotted pair first, in bold, and a timing in doubt in amber), the card kept inside the plot."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor

from .. import theme
from ..result_columns import BY_KEY, DOUBT, cell_text, origin_color
from .plot_items import MARKER_SIZE

if TYPE_CHECKING:
    from .pareto_plot import ParetoPlot

HOVER_FIELDS = ("latency_ms", "gflops", "flops", "params", "speedup", "accuracy", "fisher_potential", "e2e_speedup")


class HoverCard:
    """The ring (`marker`) and the card (`label`) of the result `result_id` under the mouse in `plot`."""

    def __init__(self, plot: ParetoPlot):
        self.plot = plot
        self.result_id: int | None = None
        self._rows: dict[int, dict] = {}  # the store's rows of the results hovered, until they change
        self.marker = pg.ScatterPlotItem(
            size=MARKER_SIZE + 8, brush=None, pxMode=True, pen=pg.mkPen(theme.TEXT, width=1.5)
        )
        card = QColor(theme.CARD_BG)
        card.setAlpha(235)
        self.label = pg.TextItem(color=theme.TEXT, fill=pg.mkBrush(card), border=pg.mkPen(theme.CARD_BORDER))
        self.label.setZValue(100)
        self.label.hide()
        plot.session.resultsReset.connect(self._rows.clear)
        plot.session.operatorsRenamed.connect(self._rows.clear)

    def hide(self) -> None:
        self.result_id = None
        self.label.hide()
        self.marker.setData([], [])

    def show(self, result_id: int, x: float, y: float) -> None:
        """The card of `result_id`, whose point is at (x, y), on the side of the point away from
        the nearest edges."""
        self.marker.setData([x], [y])
        if result_id != self.result_id:
            self.result_id = result_id
            self.label.setHtml(self.html(result_id))
        (x0, x1), (y0, y1) = self.plot.viewbox.viewRange()
        self.label.setAnchor((1.0 if x > (x0 + x1) / 2 else 0.0, 0.0 if y > (y0 + y1) / 2 else 1.0))
        self.label.setPos(x, y)
        self.label.show()
        self._keep_inside()

    def _keep_inside(self) -> None:
        """Shift the hover card back inside the plot where it would cross an edge (a wide card
        beside a point near the right or top edge was cut: "not meas…")."""
        self.label.updateTransform(force=True)  # pyqtgraph otherwise sizes it at the next paint
        viewbox = self.plot.viewbox
        box = viewbox.sceneBoundingRect().adjusted(3, 3, -3, -3)
        card = self.label.mapRectToScene(self.label.boundingRect())
        dx = max(box.left() - card.left(), 0.0) + min(box.right() - card.right(), 0.0)
        dy = max(box.top() - card.top(), 0.0) + min(box.bottom() - card.bottom(), 0.0)
        if dx or dy:
            at = viewbox.mapViewToScene(self.label.pos()) + QPointF(dx, dy)
            self.label.setPos(viewbox.mapSceneToView(at))

    def html(self, result_id: int) -> str:
        session, x_key, y_key = self.plot.session, self.plot.x_key, self.plot.y_key
        row = self._rows.get(result_id)
        if row is None:
            row = self._rows[result_id] = session.row(result_id) or {}
        if not row:
            return f"result {result_id} (deleted)"
        name = html.escape(row["operator_name"] or f"operator {row['operator_id']}")
        color = origin_color(row["origin"] or "", session.frame.origins)
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
        keys = [x_key, y_key] + [k for k in HOVER_FIELDS if k not in (x_key, y_key)]
        cells = [
            f"{BY_KEY[k].axis}: <b>{html.escape(cell_text(row, k))}</b>"
            if k in (x_key, y_key)
            else f"{BY_KEY[k].axis}: {html.escape(cell_text(row, k))}"
            for k in keys
            if row.get(k) is not None
        ]
        lines += cells
        if row.get("timing_note"):
            warning = theme.COLORS["warning_text"]
            lines.append(f"<span style='color:{warning}'>{DOUBT.strip()} {html.escape(row['timing_note'])}</span>")
        return f"<div style='color:{theme.TEXT}'>{'<br>'.join(lines)}</div>"
