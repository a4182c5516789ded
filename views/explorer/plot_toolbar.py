"""The Pareto plot's toolbar, three rows: the axes (a column and a log toggle each) and the view
tools (Select, the ⚠ toggle that ranks results whose timing is in doubt, Fit); the origins as
chips that show or hide their results; the counts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from .. import theme
from ..result_columns import AXES, DOUBT, origin_color
from . import style

if TYPE_CHECKING:
    from .pareto_plot import ParetoPlot

AXIS_TITLE_CHARS = 22  # the axis boxes' width in characters; longer titles show whole in the open list


class PlotToolbar(QWidget):
    def __init__(self, plot: ParetoPlot):
        super().__init__(plot)  # made in place: moving a made tree of widgets restyles all of it
        self.plot = plot
        self.setObjectName("explorerBar")
        # a QWidget subclass draws its style sheet's background (#explorerBar) only when asked to
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setStyleSheet(theme.style_sheet(style.BAR))
        rows = QVBoxLayout(self)
        rows.setContentsMargins(10, 4, 10, 2)
        rows.setSpacing(2)
        bar = QHBoxLayout()
        bar.setSpacing(6)
        self.axis_combos: list[QComboBox] = []
        self.log_buttons: list[QToolButton] = []
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
            combo.setCurrentIndex(combo.findData((plot.x_key, plot.y_key)[i]))
            combo.activated.connect(lambda _=0, i=i: plot.axis_chosen(i))
            log = QToolButton()
            log.setText("log")
            log.setCheckable(True)
            log.setChecked(plot.log[i])
            log.setToolTip(f"Logarithmic {title} axis")
            log.toggled.connect(lambda on, i=i: plot.set_log(i, on))
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
        self.select_button.toggled.connect(lambda on: setattr(plot.viewbox, "select_mode", on))
        fit = QToolButton()
        fit.setText("Fit")
        fit.setToolTip("Show every result and follow new ones again")
        fit.clicked.connect(plot.fit)
        self.doubt_button = QToolButton()
        self.doubt_button.setText(DOUBT.strip())
        self.doubt_button.setCheckable(True)
        self.doubt_button.setToolTip(
            "Rank results whose timing is in doubt (hollow markers) on the front too; "
            "they are left off a front of timed values otherwise"
        )
        self.doubt_button.toggled.connect(plot.set_doubtful_on_front)
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
        rows.addLayout(bar)
        rows.addLayout(second)
        rows.addWidget(self.summary)  # a row of its own: beside the chips it wrapped onto five lines
        self.chips: dict[str, QToolButton] = {}  # per origin

    def show_axes(self, keys: tuple[str, str], logs: list[bool]) -> None:
        """The columns and log toggles of the axes shown (the toggles without telling the plot)."""
        for i, key in enumerate(keys):
            self.axis_combos[i].setCurrentIndex(self.axis_combos[i].findData(key))
            self.log_buttons[i].blockSignals(True)
            self.log_buttons[i].setChecked(logs[i])
            self.log_buttons[i].blockSignals(False)

    def show_origins(self, counts: dict[str, int], origins, hidden: set[str]) -> None:
        """A chip per origin with results (`counts`), made the first time one has some."""
        for origin, count in counts.items():
            button = self.chips.get(origin)
            if button is None:
                button = self.chips[origin] = QToolButton()
                button.setCheckable(True)
                button.setProperty("chip", True)
                button.setChecked(origin not in hidden)
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
                button.setIcon(theme.dot_icon(origin_color(origin, origins)))
                button.setToolTip(f"Show or hide the results of {origin}")
                button.toggled.connect(lambda on, o=origin: self.plot.show_origin(o, on))
                self.legend.addWidget(button)
            button.setText(f"{origin} {count:,}")
        for origin, button in self.chips.items():
            button.setVisible(origin in counts)
