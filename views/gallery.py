"""The operator gallery: the best operators of one Pareto front (two objectives of the
results store), as cards with a thumbnail of each graph, filtered by origin, each one a
double-click away from the editor or an export.

The front is computed among the results of the chosen origin (core.store.fronts),
so "search:mcts" shows the best that search found. Until the user picks one, the front is the
first of FRONTS the results support: accuracy against tuned end-to-end speedup once the
discovery loop has timed survivors, and otherwise the best there is, saying what is missing. Thumbnails are drawn offscreen by
views.pictures in brief (a named box per node: the editor's cards would be too small to
read) and cached per operator and sizes.

A result whose timing is in doubt never ranks on a front of a timed objective: it is left off
and counted in the status line, unless "Timings in doubt" is checked, when its card says so;
"Measure again" queues those measurements once more (core.compile.remeasure) for a worker to
take while the machine is quiet."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.compile.remeasure import RemeasureDoubtful
from core.errors import TesseraError
from core.export import from_document
from core.jobs.submit import submit
from core.store import Store
from core.store.fronts import both_counts, doubtful, operator_front, origins
from core.store.searches import runs

from . import theme
from .pictures import graph_brief
from .result_columns import BY_KEY, DOUBT, cell_text

#: the fronts on offer, the most telling first (the default is the first the results support)
FRONTS = (
    ("e2e_speedup", "accuracy"),
    ("latency_ms", "accuracy"),
    ("flops", "accuracy"),
    ("params", "accuracy"),
    ("latency_ms", "fisher_potential"),
    ("flops", "fisher_potential"),
    ("latency_ms", "flops"),
    ("latency_ms", "params"),
    ("flops", "params"),
)
THUMBNAIL = QSize(300, 160)
MAX_CARDS = 48
ALL_ORIGINS = "All origins"


@dataclass(frozen=True)
class Card:
    """One operator on the front: its best result row there (by the first objective)."""

    operator_id: int
    name: str
    origin: str
    operator_hash: str
    bindings: str  # JSON text, as in the results view
    x: float
    y: float
    doubt: str = ""  # why its timing is in doubt ("" when it is not)
    texts: tuple[str, str] = ("", "")  # x and y as the results table shows them (a speedup with its interval)


def front_counts(store: Store) -> dict[tuple[str, str], int]:
    """How many results have both objectives of each of FRONTS."""
    return both_counts(store, FRONTS)


def missing_note(counts: dict[tuple[str, str], int]) -> str:
    """What the results lack for the front the loop ranks by (accuracy against tuned speedup)."""
    if counts[FRONTS[0]]:
        return ""
    if not any(n for (_, y), n in counts.items() if y == "accuracy"):
        return (
            "No result has an accuracy yet: a discovery run (Search page) or Evaluate accuracy scores "
            "operators, and ranks them by accuracy against tuned end-to-end speedup."
        )
    return (
        "No result has a tuned end-to-end speedup yet: a discovery run with end-to-end timing measures "
        "the network with each survivor against the tuned original."
    )


def front_cards(store: Store, x: str, y: str, origin: str | None = None, with_doubtful: bool = False) -> list[Card]:
    """Operators on the Pareto front of (x, y) among the results of `origin` (all when None),
    best x first, each operator once; results whose timing is in doubt only `with_doubtful`."""
    return [
        Card(
            r["operator_id"],
            r["operator_name"] or f"operator {r['operator_id']}",
            r["origin"] or "",
            r["operator_hash"],
            r["bindings"] or "",
            r[x],
            r[y],
            r["timing_note"] or "",
            (_text(r, x), _text(r, y)),
        )
        for r in operator_front(store, x, y, origin, with_doubtful)
    ]


class OperatorGallery(QWidget):
    openRequested = Signal(int)  # operator id: show it in the editor
    exportRequested = Signal(int)  # operator id: open the export dialog for it

    def __init__(self, store_path: str | Path | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.store_path = Path(store_path) if store_path else None
        self._thumbnails: dict[tuple[str, str], QPixmap] = {}
        self._cards: list[Card] = []
        self._user_front = False  # the user picked a front: keep it
        self._note = ""  # what the default front says is missing

        self.front_box = QComboBox()
        for x, y in FRONTS:
            self.front_box.addItem(f"{_title(y)} vs {_title(x)}", (x, y))
        self.origin_box = QComboBox()
        self.origin_box.addItem(ALL_ORIGINS, None)
        self.doubtful_box = QCheckBox("Timings in doubt")
        self.doubtful_box.setToolTip(
            "Also rank results whose timing is in doubt (a speedup interval too wide to decide); "
            "they are left off the front otherwise"
        )
        self.doubtful_box.toggled.connect(self._show_cards)
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Front"))
        bar.addWidget(self.front_box, 1)
        bar.addWidget(QLabel("Origin"))
        bar.addWidget(self.origin_box, 1)
        bar.addWidget(self.doubtful_box)
        bar.addWidget(refresh)

        self.list = QListWidget()
        self.list.setViewMode(QListView.ViewMode.IconMode)
        self.list.setIconSize(THUMBNAIL)
        self.list.setGridSize(QSize(THUMBNAIL.width() + 16, THUMBNAIL.height() + 74))
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setMovement(QListView.Movement.Static)
        self.list.setWordWrap(True)
        self.list.setUniformItemSizes(True)
        self.list.itemDoubleClicked.connect(lambda item: self.openRequested.emit(item.data(Qt.ItemDataRole.UserRole)))
        self.list.itemSelectionChanged.connect(self._selection_changed)
        self.status = QLabel()
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)  # a long note must wrap, not widen the window
        self.remeasure_button = QPushButton("Measure again")
        self.remeasure_button.setToolTip("Queue every measurement whose timing is in doubt again (run a worker)")
        self.remeasure_button.clicked.connect(self.remeasure_doubtful)
        self.open_button = QPushButton("Open in editor")
        self.export_button = QPushButton("Export…")
        self.open_button.clicked.connect(lambda: self._emit_selected(self.openRequested))
        self.export_button.clicked.connect(lambda: self._emit_selected(self.exportRequested))
        actions = QHBoxLayout()
        actions.addWidget(self.status, 1)
        actions.addWidget(self.remeasure_button)
        actions.addWidget(self.open_button)
        actions.addWidget(self.export_button)

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.list, 1)
        layout.addLayout(actions)
        self.front_box.activated.connect(self._front_picked)
        self.origin_box.currentIndexChanged.connect(self._show_cards)
        self._selection_changed()
        self.refresh()

    # public -----------------------------------------------------------------------
    def set_front(self, x: str, y: str) -> None:
        self._user_front = True
        index = self._front_index(x, y)
        if index < 0:
            self.front_box.addItem(f"{_title(y)} vs {_title(x)}", (x, y))
            index = self.front_box.count() - 1
        self.front_box.setCurrentIndex(index)
        self._show_cards()

    def _front_picked(self) -> None:
        """The user picked a front: it stays until they pick another."""
        self._user_front = True
        self._show_cards()

    def _front_index(self, x: str, y: str) -> int:
        """The front box's entry of (x, y), or -1 (findData compares tuples by identity)."""
        box = self.front_box
        return next((i for i in range(box.count()) if tuple(box.itemData(i)) == (x, y)), -1)

    def set_origin(self, origin: str | None) -> None:
        index = self.origin_box.findData(origin)
        if index >= 0:
            self.origin_box.setCurrentIndex(index)

    @property
    def cards(self) -> list[Card]:
        return list(self._cards)

    def refresh(self) -> None:
        """Re-read the origins and the front from the store (new results may have arrived)."""
        known = self._read(origins) or []
        current = self.origin_box.currentData()
        self.origin_box.blockSignals(True)
        self.origin_box.clear()
        self.origin_box.addItem(ALL_ORIGINS, None)
        for origin in known:
            self.origin_box.addItem(origin, origin)
        self.origin_box.setCurrentIndex(max(0, self.origin_box.findData(current)))
        self.origin_box.blockSignals(False)
        counts = self._read(front_counts)
        if counts is not None and not self._user_front:
            supported = next((front for front in FRONTS if counts[front]), FRONTS[0])
            self.front_box.setCurrentIndex(self._front_index(*supported))
            self._note = missing_note(counts)
        self._show_cards()

    def remeasure_doubtful(self) -> None:
        """Queue every measurement in doubt again; the status line says how many."""
        queued = self._read(lambda store: submit(store, RemeasureDoubtful()))
        if queued is not None:
            self.status.setText(
                f"Queued {len(queued.ids)} measurement{'s' * (len(queued.ids) != 1)} in doubt again: "
                "a worker measures them (best while the machine is quiet)."
            )

    # drawing ----------------------------------------------------------------------
    def _show_cards(self) -> None:
        x, y = self.front_box.currentData()
        origin = self.origin_box.currentData()
        with_doubtful = self.doubtful_box.isChecked()
        found = self._read(
            lambda store: (
                front_cards(store, x, y, origin, with_doubtful),
                0 if with_doubtful else doubtful(store, x, y, origin),
            )
        )
        cards, left_off = found if found is not None else (None, 0)
        flag = (
            f"{left_off} result{'s' * (left_off != 1)} with timings in doubt left off{DOUBT}: "
            "re-measure on a quiet machine, or check Timings in doubt."
            if left_off
            else ""
        )
        self.list.clear()
        self._cards = (cards or [])[:MAX_CARDS]
        self.remeasure_button.setVisible(bool(left_off))
        if cards is None:
            return
        if not cards:
            which = f" from {origin}" if origin else ""
            self._say(f"No results{which} have both {_title(x)} and {_title(y)} yet.", flag)
            return
        for card in self._cards:
            item = QListWidgetItem(QIcon(self._thumbnail(card)), _caption(card, x, y))
            item.setData(Qt.ItemDataRole.UserRole, card.operator_id)
            item.setToolTip(
                f"{card.name} (operator {card.operator_id}, {card.origin})\n"
                f"sizes: {_sizes(card.bindings) or 'its own'}\n"
                + (f"timing in doubt: {card.doubt}\n" if card.doubt else "")
                + "Double-click to open it in the editor."
            )
            self.list.addItem(item)
        more = f"; showing the first {MAX_CARDS}" if len(cards) > MAX_CARDS else ""
        self._say(f"{len(cards)} operator{'s' * (len(cards) != 1)} on the front{more}.", flag, self._reference(x, y))

    def _say(self, *sentences: str) -> None:
        """The status line: what is shown, and (on a front the user did not pick) what is missing."""
        note = "" if self._user_front else self._note
        self.status.setText(" ".join(s for s in (*sentences, note) if s))

    def _reference(self, x: str, y: str) -> str:
        """The original network's place on the accuracy-against-speedup front: 1x, its accuracy."""
        if (x, y) != FRONTS[0]:
            return ""
        accuracies = sorted({r.baseline_accuracy for r in self._read(runs) or [] if r.baseline_accuracy is not None})
        if not accuracies:
            return ""
        return f"The original network: 1.00× at {', '.join(f'{a:.1%}' for a in accuracies)} accuracy."

    def _thumbnail(self, card: Card) -> QPixmap:
        key = (card.operator_hash, card.bindings)
        if key not in self._thumbnails:
            row = self._read(lambda store: store.operator(card.operator_id))
            pixmap = QPixmap(THUMBNAIL)
            pixmap.fill(QColor(theme.CANVAS_BG))
            if row is not None:
                try:
                    sizes = json.loads(card.bindings) if card.bindings else {}
                    item = from_document(row["document"], card.origin, sizes, name=card.name)
                    pixmap = QPixmap.fromImage(graph_brief(item.graph, THUMBNAIL))
                except TesseraError as e:
                    self.status.setText(f"Cannot draw {card.name}: {e}")
            self._thumbnails[key] = pixmap
        return self._thumbnails[key]

    def _read(self, query):
        """query(store) on a short-lived connection; None (and a message) if there is no store."""
        if self.store_path is None or not self.store_path.is_file():
            self.status.setText("No results store yet: evaluate or search to fill one.")
            return None
        try:
            with Store(self.store_path) as store:
                return query(store)
        except TesseraError as e:
            self.status.setText(str(e))
            return None

    # selection --------------------------------------------------------------------
    def _selected_id(self) -> int | None:
        items = self.list.selectedItems()
        return items[0].data(Qt.ItemDataRole.UserRole) if items else None

    def _selection_changed(self) -> None:
        chosen = self._selected_id() is not None
        self.open_button.setEnabled(chosen)
        self.export_button.setEnabled(chosen)

    def _emit_selected(self, signal) -> None:
        operator_id = self._selected_id()
        if operator_id is not None:
            signal.emit(operator_id)


def _title(key: str) -> str:
    column = BY_KEY.get(key)
    return column.title if column is not None else key


def _text(row: dict, key: str) -> str:
    return cell_text(row, key) if key in BY_KEY else str(row[key])


def _caption(card: Card, x: str, y: str) -> str:
    values = "  ·  ".join(f"{_title(k)} {text}" for k, text in zip((x, y), card.texts))
    return f"{card.name}\n{card.origin}\n{values}" + (f"\ntiming in doubt{DOUBT}" if card.doubt else "")


def _sizes(bindings: str) -> str:
    try:
        return ", ".join(f"{k}={v}" for k, v in json.loads(bindings).items()) if bindings else ""
    except json.JSONDecodeError:
        return bindings
