"""The candidates at each stage of a discovery run as tiles (proposed, screened, trained, within
the margin, tested, tuned, with those that left at each step), the rarer outcomes on a line
under them. What the run says in words is core.search.report's (views.search.search_panel)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QVBoxLayout, QWidget

#: the tiles, in the loop's order: (count key, caption)
TILES = (
    ("proposed", "proposed"),
    ("screened", "screened"),
    ("screened out", "screened out"),
    ("trained", "trained"),
    ("stopped early", "stopped early"),
    ("within margin", "within margin"),
    ("tested", "tested"),
    ("tuned", "tuned"),
)
TILES_PER_ROW = 4  # two rows: the page fits a 1280x720 screen beside the settings
#: counts that are rare or transient: one line under the tiles
OTHERS = ("in flight", "waiting", "did not learn", "diverged", "too slow", "worse on test", "undecided", "failed")


class StageCounts(QWidget):
    """The stage counts of core.search.stages.stage_counts as tiles that update in place."""

    def __init__(self, parent=None):
        super().__init__(parent)
        grid = QGridLayout()
        grid.setSpacing(8)
        self.numbers: dict[str, QLabel] = {}
        for column, (key, caption) in enumerate(TILES):  # in rows of TILES_PER_ROW, in the loop's order
            tile = QFrame()
            tile.setObjectName("stageTile")
            inner = QVBoxLayout(tile)
            inner.setContentsMargins(8, 6, 8, 6)
            inner.setSpacing(0)
            number = QLabel("0")
            number.setObjectName("stageCount")
            number.setAlignment(Qt.AlignmentFlag.AlignCenter)
            label = QLabel(caption)
            label.setObjectName("hint")
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            inner.addWidget(number)
            inner.addWidget(label)
            grid.addWidget(tile, *divmod(column, TILES_PER_ROW))
            self.numbers[key] = number
        self.others = QLabel()
        self.others.setObjectName("hint")
        self.others.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(grid)
        layout.addWidget(self.others)
        self.show_counts({})

    def show_tuned(self, timed: bool) -> None:
        """The "tuned" tile only for a run that times survivors end to end (none are tuned otherwise)."""
        tile = self.numbers["tuned"].parentWidget()
        assert tile is not None  # every number sits in its tile
        tile.setVisible(timed)

    def show_counts(self, counts: dict[str, int]) -> None:
        for key, label in self.numbers.items():
            label.setText(f"{counts.get(key, 0):,}")
        self.others.setText(" · ".join(f"{counts.get(key, 0):,} {key}" for key in OTHERS))

    def text(self) -> str:
        """'3 proposed, 2 screened, ...': what the tiles say, in words."""
        return ", ".join(
            f"{self.numbers[key].text()} {caption}" for key, caption in TILES if self.numbers[key].isVisibleTo(self)
        )
