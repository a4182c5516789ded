"""The Pareto plot's own pyqtgraph items: a view box that selects a rectangle of points, and
markers that draw only the thinned points while framing all of them; and how a marker looks:
filled in its origin's colour, hollow where its timing is in doubt."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal

MARKER_SIZE = 7


class SelectingViewBox(pg.ViewBox):
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


class ThinnedMarkers(pg.ScatterPlotItem):
    """Draws only the thinned markers but reports the bounds of every point, so that
    auto-range (until the user zooms) frames all results."""

    def __init__(self, **options):
        super().__init__(**options)
        self.full_bounds: tuple[tuple[float, float], tuple[float, float]] | None = None

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return (None, None) if self.full_bounds is None else self.full_bounds[ax]


def marker_style(codes: np.ndarray, doubt: np.ndarray, brushes: np.ndarray, pens: np.ndarray) -> dict:
    """Markers of origins `codes` filled in their origin's colour (`brushes`); hollow, outlined in
    it (`pens`), where `doubt` says the timing is in doubt."""
    outline = pg.mkPen(255, 255, 255, 200, width=0.8)
    return {
        "brush": [None if d else b for d, b in zip(doubt, brushes[codes])],
        "pen": [p if d else outline for d, p in zip(doubt, pens[codes])],
    }
