"""What clicks on the Pareto plot do: a click selects the point under the mouse (Ctrl+click adds
or removes it) or clears the selection, a double-click opens the result in the editor, a right
click offers the same and Fit All."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

if TYPE_CHECKING:
    from .pareto_plot import ParetoPlot


def clicked(plot: ParetoPlot, event) -> None:
    row = plot.point_at(event.scenePos())
    ids = plot.session.frame.ids
    if event.button() == Qt.MouseButton.RightButton:
        _context_menu(plot, event, None if row is None else int(ids[row]))
        return
    if event.button() != Qt.MouseButton.LeftButton:
        return
    if event.double():
        if row is not None:
            plot.pointActivated.emit(int(ids[row]))
        return
    toggle = event.modifiers() & Qt.KeyboardModifier.ControlModifier
    if row is None:
        if not toggle and plot.viewbox.sceneBoundingRect().contains(event.scenePos()):
            plot.selection.clear(plot)
        return
    result_id = int(ids[row])
    if toggle:
        chosen = plot.selection.ids
        chosen = chosen[chosen != result_id] if result_id in chosen else np.append(chosen, result_id)
        plot.selection.set(chosen, source=plot, current=result_id)
    else:
        plot.selection.set([result_id], source=plot, current=result_id)


def _context_menu(plot: ParetoPlot, event, result_id: int | None) -> None:
    menu = QMenu(plot)
    if result_id is not None:
        menu.addAction("Open in Editor", lambda: plot.pointActivated.emit(result_id))
        menu.addSeparator()
    menu.addAction("Fit All", plot.fit)
    menu.addAction("Clear Selection", lambda: plot.selection.clear(plot)).setEnabled(len(plot.selection) > 0)
    menu.popup(event.screenPos().toPoint())
