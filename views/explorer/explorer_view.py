"""The Explorer page of the window: the Pareto plot and the current result's panel
above, the results browser below, all sharing one selection."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QMessageBox, QSplitter, QVBoxLayout, QWidget

from core.export import RESULTS_FORMATS
from core.ir.errors import TesseraError

from ..export_dialog import ExportDialog
from .compare import CompareDialog
from .pareto_plot import ParetoPlot
from .result_panel import ResultPanel
from .results_table import ResultsBrowser
from .selection import ResultSelection
from .session import ExplorerSession
from .variants import VariantsDialog


class ExplorerView(QWidget):
    openRequested = Signal(int)  # result id to open in the editor
    measureRequested = Signal(object, bool)  # result ids, tune?
    accuracyRequested = Signal(object)  # result ids whose operators to evaluate for accuracy

    def __init__(self, session: ExplorerSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.selection = ResultSelection(self)
        self.panel = ResultPanel(session, self.selection)
        self.plot = ParetoPlot(session, self.selection)
        self.plot.frontChanged.connect(self.panel.show_front)
        self.panel.show_front(self.plot.front_ids(), self.plot.x_key, self.plot.y_key)
        self.browser = ResultsBrowser(session, self.selection)
        self.compare_dialog: CompareDialog | None = None
        self.variants_dialog: VariantsDialog | None = None

        self.top = QSplitter(Qt.Orientation.Horizontal)
        self.top.addWidget(self.plot)
        self.top.addWidget(self.panel)
        self.top.setStretchFactor(0, 1)
        self.top.setSizes([1120, 380])
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.top)
        self.splitter.addWidget(self.browser)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([560, 340])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self.plot.pointActivated.connect(self.openRequested)
        self.panel.openRequested.connect(self.openRequested)
        self.panel.accuracyRequested.connect(self.accuracyRequested)
        self.browser.openRequested.connect(self.openRequested)
        self.browser.measureRequested.connect(self.measureRequested)
        self.browser.compareRequested.connect(self.compare)
        self.browser.variantsRequested.connect(self.show_variants)
        self.browser.exportRequested.connect(self.export_result)
        self.browser.exportResultsRequested.connect(self.export_results)
        self.browser.filteredChanged.connect(self.plot.show_filtered)
        self.export_dialog: ExportDialog | None = None

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
        self._open_export(
            ExportDialog.of_stored(
                self.session.path, row["operator_id"], row["operator_name"], json.loads(row["bindings"] or "{}"), self
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
        dialog.open()

    def is_idle(self) -> bool:
        return self.session.is_idle() and not self.browser.model.pending and not self.plot.redraw_pending
