"""Where the Pareto plot shows the original network of each discovery run: a star at 1x its own
speed and the proxy accuracy it was trained to, where both axes have a value for it, and the 1x
line on a speedup axis, so a candidate's gain reads against the network it would replace."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from .. import theme
from .plot_axes import coords
from .plot_items import MARKER_SIZE
from .session import ExplorerSession

#: what the original network of a discovery run is on an axis: 1x its own speed, its accuracy
REFERENCE = {"e2e_speedup": lambda run: 1.0, "accuracy": lambda run: run.baseline_accuracy}


class ReferenceMarks:
    """The star (`star`) and its name (`label`) for the original networks, and the 1x line (`parity_line`)."""

    def __init__(self):
        self.star = pg.ScatterPlotItem(
            symbol="star", size=MARKER_SIZE + 11, brush=pg.mkBrush(theme.TEXT), pen=pg.mkPen(theme.CARD_BG), pxMode=True
        )
        self.label = pg.TextItem("original network", color=theme.TEXT_MUTED, anchor=(-0.12, 1.1))
        self.parity_line = pg.InfiniteLine(pen=pg.mkPen(theme.TEXT_MUTED, width=1, style=Qt.PenStyle.DashLine))
        self.parity_line.setToolTip("As fast as the original network (1x)")

    def draw(self, session: ExplorerSession, keys: tuple[str, str], log: list[bool]) -> None:
        """The original network of each discovery run of `session` on the axes `keys` (log or not)."""
        x_key, y_key = keys
        points = set()
        if x_key in REFERENCE and y_key in REFERENCE:
            for run in session.runs():
                if run.baseline_accuracy is not None:
                    points.add((REFERENCE[x_key](run), REFERENCE[y_key](run)))
        x = coords(np.array([p[0] for p in points], float), log[0])
        y = coords(np.array([p[1] for p in points], float), log[1])
        self.star.setData(x=x, y=y)
        self.label.setVisible(len(x) > 0)
        if len(x):
            self.label.setPos(float(x[0]), float(y[0]))
        speedup_axis = [key == "e2e_speedup" for key in keys]
        self.parity_line.setVisible(any(speedup_axis))
        if any(speedup_axis):
            axis = speedup_axis.index(True)
            self.parity_line.setAngle(90 if axis == 0 else 0)
            self.parity_line.setValue(0.0 if log[axis] else 1.0)
