"""The Explorer's plot gets the room at 1280x720: most of the page by default, at least half with
the Jobs dock open, never squeezed below a usable height by a dock, and the splitter stays
where the user put it across a restart."""

from __future__ import annotations

import pytest
import shiboken6
from PySide6.QtCore import QEvent, Qt

from views.explorer.explorer_view import PLOT_MIN_HEIGHT

from .helpers import NO_BUTTON, mouse, open_explorer
from .test_explorer import add_results, random_values, viewport_point, wait_for_results

pytestmark = pytest.mark.gui


def explorer_window(qtbot, store_path, settings):
    return open_explorer(qtbot, store_path, settings, (1280, 720))


def test_the_plot_keeps_the_room_with_the_jobs_dock_open_and_across_a_restart(qtbot, store_path, tmp_path, dialogs):
    from app.gui.settings import open_settings

    add_results(store_path, random_values(40))
    settings = open_settings(tmp_path / "settings.ini")
    window = explorer_window(qtbot, store_path, settings)
    try:
        wait_for_results(qtbot, window, 40)
        view = window.explore.view
        qtbot.waitUntil(lambda: view.plot.height() > 0.6 * view.height())
        window.explore.show_jobs()
        jobs = window.docks["jobs"]
        qtbot.waitUntil(lambda: jobs.isVisible() and jobs.height() > 100)
        qtbot.waitUntil(lambda: view.plot.height() >= view.height() / 2)
        assert view.browser.table.viewport().height() >= 2 * view.browser.table.verticalHeader().defaultSectionSize()
        window.resizeDocks([jobs], [600], Qt.Orientation.Vertical)  # the user drags the dock up
        qtbot.wait(20)
        assert view.plot.height() >= PLOT_MIN_HEIGHT
        window.resizeDocks([jobs], [150], Qt.Orientation.Vertical)
        qtbot.wait(20)
        total = sum(view.splitter.sizes())
        view.splitter.moveSplitter(round(total * 0.55), 1)  # the user moves the splitter
        qtbot.wait(20)
        share = view.splitter.sizes()[0] / sum(view.splitter.sizes())
        window.close()
        qtbot.waitUntil(lambda: not shiboken6.isValid(window) or not window.isVisible())

        window = explorer_window(qtbot, store_path, open_settings(tmp_path / "settings.ini"))
        view = window.explore.view
        qtbot.waitUntil(lambda: view.plot.height() > 0)
        again = view.splitter.sizes()[0] / sum(view.splitter.sizes())
        assert again == pytest.approx(share, abs=0.03)
    finally:
        if shiboken6.isValid(window):
            window.close()


def test_hover_cards_stay_inside_the_plot_at_every_corner(qtbot, store_path, tmp_path, dialogs):
    from app.gui.settings import open_settings

    # the corners of the data, and the middle: a tall card beside a point just below the middle
    # reaches past the top of a short plot
    values = [(0.1, 1e6), (0.1, 1e9), (10.0, 1e6), (10.0, 1e9), (0.95, 2.8e7), (1.05, 3.6e7)]
    ids = add_results(store_path, values, bindings={"C_in": 64, "C_out": 64, "H": 56, "W": 56, "K": 3})
    window = explorer_window(qtbot, store_path, open_settings(tmp_path / "settings.ini"))
    try:
        wait_for_results(qtbot, window, len(values))
        window.explore.show_jobs()  # the plot at its smallest default size
        plot = window.explore.view.plot
        viewport = plot.plot.viewport()
        qtbot.wait(20)
        plot.fit()
        box = plot.viewbox.sceneBoundingRect()
        for result_id in ids:
            mouse(viewport, QEvent.Type.MouseMove, viewport_point(plot, result_id), NO_BUTTON, NO_BUTTON)
            qtbot.wait(20)
            assert plot.card.result_id == result_id and plot.card.label.isVisible()
            card = plot.card.label.mapRectToScene(plot.card.label.boundingRect())
            assert box.adjusted(-1, -1, 1, 1).contains(card), f"the card of {result_id} crosses the plot edge"
    finally:
        if shiboken6.isValid(window):
            window.close()
