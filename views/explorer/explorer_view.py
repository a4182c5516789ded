"""The Explorer page of the window: the Pareto plot and the current result's panel
above, the results browser below, all sharing one selection."""

from __future__ import annotations

import json
from collections.abc import Generator

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QLabel, QMessageBox, QSplitter, QVBoxLayout, QWidget

from core.errors import TesseraError
from core.export import RESULTS_FORMATS

from ..export_dialog import ExportDialog
from .compare import CompareDialog
from .pareto_plot import ParetoPlot
from .result_panel import ResultPanel
from .results_table import ResultsBrowser
from .selection import ResultSelection
from .session import ExplorerSession
from .variants import VariantsDialog

PLOT_SHARE = 0.68  # of the page's height, the plot's at first: the plot is what the page is for
PLOT_MIN_HEIGHT = 180  # px: docks and the results below never squeeze the plot under this


class ExplorerView(QWidget):
    openRequested = Signal(int)  # result id to open in the editor
    sequenceRequested = Signal(int)  # result id whose sequence to open in the sequence editor
    measureRequested = Signal(object, bool)  # result ids, tune?
    accuracyRequested = Signal(object)  # result ids whose operators to evaluate for accuracy
    exportOpened = Signal(object)  # an export dialog about to open (the window gives it its folder)

    def __init__(self, session: ExplorerSession, parent=None):
        """The page's frame, empty: build() puts the parts in it (`parent`: where it will show)."""
        super().__init__(parent)
        self.session = session
        self.selection = ResultSelection(self)
        self.plot: ParetoPlot
        self.panel: ResultPanel
        self.browser: ResultsBrowser
        self.compare_dialog: CompareDialog | None = None
        self.variants_dialog: VariantsDialog | None = None
        self.export_dialog: ExportDialog | None = None
        self.top = QSplitter(Qt.Orientation.Horizontal)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.top)
        self.plot_share = PLOT_SHARE
        self.notice = QLabel()  # why the store cannot be written, when it cannot
        self.notice.setObjectName("storeNotice")
        self.notice.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.notice)
        layout.addWidget(self.splitter, 1)

    def _connect(self) -> None:
        """Once every part is in: sizes, and the parts wired to each other and to the session."""
        self.top.setStretchFactor(0, 1)
        self.top.setSizes([1120, 380])
        self.splitter.setStretchFactor(0, 1)  # room the page gains or loses is the plot's first
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setChildrenCollapsible(False)  # neither the plot nor the results vanish
        self.top.setMinimumHeight(PLOT_MIN_HEIGHT)
        # a click gives the plot the keyboard; Tab goes on to controls that show their focus
        self.plot.plot.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.splitter.splitterMoved.connect(self._keep_share)
        self.splitter.installEventFilter(self)
        self._share_plot()
        self.plot.frontChanged.connect(self.panel.show_front)
        self.panel.filterRequested.connect(self.browser.filter_edit.setText)
        self.panel.show_front(self.plot.front_ids(), self.plot.x_key, self.plot.y_key)
        self.session.refused.connect(self._show_notice)
        self.session.resultsReset.connect(self._show_notice)
        self._show_notice()

        self.plot.pointActivated.connect(self.openRequested)
        self.panel.openRequested.connect(self.openRequested)
        self.panel.accuracyRequested.connect(self.accuracyRequested)
        self.browser.openRequested.connect(self.openRequested)
        self.browser.sequenceRequested.connect(self.sequenceRequested)
        self.browser.measureRequested.connect(self.measureRequested)
        self.browser.compareRequested.connect(self.compare)
        self.browser.variantsRequested.connect(self.show_variants)
        self.browser.exportRequested.connect(self.export_result)
        self.browser.exportResultsRequested.connect(self.export_results)
        self.browser.filteredChanged.connect(self.plot.show_filtered)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.splitter and event.type() == QEvent.Type.Resize:
            self._share_plot()  # a dock opened or closed below: the plot keeps its share
        return False

    def _share_plot(self) -> None:
        """The plot keeps its share of the page (PLOT_SHARE, or where the user put the splitter)
        when a dock opens or closes below it, rather than giving all the room it loses."""
        total = self.splitter.height() - self.splitter.handleWidth()
        self.splitter.setSizes([round(total * self.plot_share), total - round(total * self.plot_share)])

    def _keep_share(self) -> None:
        """The user moved the splitter: the plot's share is where they put it."""
        plot, results = self.splitter.sizes()[:2]
        if plot + results > 0:
            self.plot_share = plot / (plot + results)

    def set_plot_share(self, share: float) -> None:
        """The plot's share of the page (the window keeps the user's across restarts)."""
        self.plot_share = min(max(share, 0.2), 0.9)
        self._share_plot()

    def side_splitter(self) -> QSplitter:
        """The plot beside the result panel (the window keeps where the user left it)."""
        return self.top

    def _show_notice(self) -> None:
        """Say above everything why the store is only read, and what there is to do."""
        refusal = self.session.refusal
        if refusal and self.session.store.damage:
            shown = f"the {self.session.frame.count:,} results" if self.session.loaded else "the results"
            lost = f" ({self.session.lost})" if self.session.lost else ""
            refusal += (
                f": shown are {shown} that could still be read{lost}, and nothing is written to it. Save them "
                "with Export Results… (CSV), then move the file aside: the next Tessera command creates "
                "a new store in its place."
            )
        elif refusal:
            refusal += ": its results can be browsed and exported, not changed, and no jobs can be queued in it."
        self.notice.setText(refusal[:1].upper() + refusal[1:] if refusal else "")
        self.notice.setVisible(refusal is not None)
        self.panel.accuracy_button.setEnabled(refusal is None)

    @classmethod
    def build(cls, session: ExplorerSession, parent=None) -> Generator[str, None, ExplorerView]:
        """The view, a part at a time: it yields the name of each part once built (each
        some tens of ms over 10^5 results) so that the window goes on drawing between
        them (app.gui.pages) and a benchmark can time them.

        Each part is made inside the frame, and the frame inside `parent` (where the page
        will show): moving a finished tree of widgets under a new parent restyles all of it
        (the application has a style sheet), which took a single turn of over 100 ms when
        the parts were put together at the end."""
        view = cls(session, parent)
        try:
            view.plot = ParetoPlot(session, view.selection, view.top)
            view.top.addWidget(view.plot)
            yield "plot widgets"
            view.plot.rebuild()  # every result already read
            yield "plot points"
            view.panel = ResultPanel(session, view.selection, view.top)
            view.top.addWidget(view.panel)
            yield "result panel"
            view.panel.add_convergence()
            yield "convergence plot"
            view.browser = ResultsBrowser(session, view.selection, view.splitter)
            view.splitter.addWidget(view.browser)
            yield "results browser"
            view._connect()
            yield "connections"  # shown (laid out and painted) on the next turn
        except BaseException:  # a part failed, or the build was abandoned (the window closing)
            view.deleteLater()
            raise
        return view

    def compare(self, first: int, second: int) -> None:
        try:
            dialog = CompareDialog(self.session, (first, second), self)
        except TesseraError as e:
            QMessageBox.warning(self, "Cannot compare", str(e))
            return
        self.compare_dialog = dialog
        dialog.destroyed.connect(lambda: setattr(self, "compare_dialog", None))
        dialog.show()

    def show_variants(self, result_id: int) -> None:
        """The Variants view of a measured result (an operator not measured yet has none)."""
        if result_id < 0:
            QMessageBox.information(
                self,
                "No variants yet",
                "This operator has not been measured yet: "
                "Evaluate… or Tune… it first (with “Compare variants” to measure each algorithm).",
            )
            return
        try:
            dialog = VariantsDialog(self.session, result_id, self.selection, self)
        except TesseraError as e:
            QMessageBox.warning(self, "Cannot compare variants", str(e))
            return
        if self.variants_dialog is not None:
            self.variants_dialog.close()  # one Variants view at a time
        self.variants_dialog = dialog
        dialog.finished.connect(lambda _, d=dialog: self._variants_closed(d))
        dialog.show()

    def _variants_closed(self, dialog: VariantsDialog) -> None:
        if self.variants_dialog is dialog:
            self.variants_dialog = None

    def export_result(self, result_id: int) -> None:
        """The export dialog for the result's operator, at the result's bindings."""
        row = self.session.row(result_id)
        if row is None:
            return
        operator_id = row["operator_id"]
        self._open_export(
            ExportDialog.of_stored(
                self.session.path,
                operator_id,
                row["operator_name"],
                json.loads(row["bindings"] or "{}"),
                self,
                sequence=self.session.store.operator_sequence(operator_id) is not None,
            )
        )

    def export_results(self) -> None:
        """The export dialog for the whole store; a Pareto export uses the plot's two axes."""
        self._open_export(
            ExportDialog(
                store=str(self.session.path),
                name="results",
                formats=RESULTS_FORMATS,
                columns=(self.plot.x_key, self.plot.y_key),
                parent=self,
            )
        )

    def _open_export(self, dialog: ExportDialog) -> None:
        self.export_dialog = dialog
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(lambda: setattr(self, "export_dialog", None))
        self.exportOpened.emit(dialog)
        dialog.open()

    def is_idle(self) -> bool:
        return self.session.is_idle() and not self.browser.model.pending and not self.plot.redraw_pending
