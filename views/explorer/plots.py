"""pyqtgraph plots in the house style: white, light grid, muted axes, no pyqtgraph menus
or auto-range button (the explorer offers its own), and no stray top-level menus.

PlotItem builds its "Plot Options" menu without a parent, so it would outlive the
plot as a top-level widget; here it becomes a child of the plot widget instead."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from .. import theme
from ..result_columns import BY_KEY, Column


class ColumnAxis(pg.AxisItem):
    """Tick labels as a results column writes its values (0.1, 2.5, 100k, 1.2M), on linear
    and log axes alike, instead of SI-prefix scaling and powers of ten."""

    def __init__(self, orientation: str, column: Column = BY_KEY["latency_ms"]):
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)
        self.column = column

    def show_column(self, column: Column, log: bool) -> None:
        """Label ticks as `column` writes values, on a log axis or not (setLogMode redraws)."""
        self.column = column
        self.setLogMode(log)

    def tickStrings(self, values, scale, spacing):
        if not self.logMode:
            low, high = self.column.bounds or (-np.inf, np.inf)
            return [self.column.text(v) if low - 1e-9 <= v <= high + 1e-9 else "" for v in values]
        span = max(values) - min(values) if len(values) else 0
        keep = {1} if span > 3 else {1, 2, 5}  # minor ticks of a log axis crowd each decade's end
        return [self.column.text(10.0**v) if round(10 ** (v - np.floor(v + 1e-9))) in keep else "" for v in values]


def plot_widget(**options) -> pg.PlotWidget:
    """A PlotWidget (options as for pg.PlotWidget: viewBox, axisItems, ...) styled alike."""
    widget = pg.PlotWidget(background=theme.CARD_BG, enableMenu=False, **options)  # no view box menu made
    item = widget.getPlotItem()
    item.ctrlMenu.setParent(widget, item.ctrlMenu.windowFlags())
    item.hideButtons()
    item.showGrid(x=True, y=True, alpha=0.12)
    for side in ("left", "bottom"):
        axis = item.getAxis(side)
        axis.setPen(pg.mkPen(theme.CARD_BORDER))
        axis.setTextPen(pg.mkPen(theme.TEXT_MUTED))
        axis.label.setFont(theme.ui_font(9.5))
    return widget
