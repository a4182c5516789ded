"""What a discovery run shows while it runs: the candidates at each stage of the loop as a
row of tiles (proposed, screened, trained, within the margin, tested, tuned, with those that
left at each step), the original network's accuracy (validation, and test over seeds), the
best candidate so far with its test report, how many it was selected from, its references
(core.search.references) and the headline they give, and the time spent and left."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QVBoxLayout, QWidget

from core.jobs.queue import duration_text
from core.search import references
from core.train.paired import mean_std

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
OTHERS = ("in flight", "waiting", "did not learn", "diverged", "too slow", "failed")


class StageCounts(QWidget):
    """The stage counts of core.store.searches.stage_counts as tiles that update in place."""

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


def baseline_text(summary: dict) -> str:
    accuracy = summary.get("baseline_accuracy")
    if accuracy is None:
        return "The original network is being trained once for this run (the accuracy every candidate must keep)."
    tested = [a for a in summary.get("baseline_test") or () if a is not None]
    test = f"; {mean_std(tested)} on the test split" if tested else ""
    return f"The original network: {accuracy:.1%} proxy (validation) accuracy{test}."


def best_text(summary: dict, tune: bool) -> str:
    best = summary.get("best")
    if best is not None:
        doubt = f" Timing in doubt ({best['note']}): time it again on a quiet machine." if best.get("note") else ""
        alone = "" if best["timed_alone"] else " (timed while other jobs ran; timed again alone when the run ends)"
        test = best.get("test")
        report = (
            f" On the test split: {test['accuracy']:.1%}, {100 * test['difference']:+.1f} points against the "
            f"original seed by seed; {test['verdict']}."
            if test
            else ""
        )
        return (
            f"Best of {best['selected_from']} so far: {best['name']}, {best['e2e_speedup']:.2f}x faster end to end "
            f"than the tuned original{alone}, selected at {best['accuracy']:.1%} validation accuracy.{report}{doubt}"
        )
    within = summary.get("counts", {}).get("within margin", 0)
    if not tune:
        return f"{within} candidate(s) within the margin; end-to-end timing is off."
    return "No candidate within the margin has a tuned end-to-end speedup yet."


def references_text(summary: dict) -> str:
    """The best candidate beside its references, a line each, and the headline they give ("" without a best)."""
    best = summary.get("best")
    if best is None:
        return ""
    beside = "\n".join(f"• {line}" for line in references.lines(best, best["references"]))
    headline = best["headline"]
    return f"Beside its references:\n{beside}\n\n{headline[0].upper()}{headline[1:]}."


def time_text(elapsed: float, fraction: float, minutes: float | None, in_flight: int) -> str:
    """'Elapsed 1:05 · about 58:55 left', or what the run still waits for (while it runs)."""
    text = f"Elapsed {duration_text(elapsed)}"
    if minutes is not None and elapsed >= minutes * 60:
        return f"{text} · time is up: finishing {in_flight} candidate(s) in flight"
    if minutes is not None:
        return f"{text} · at most {duration_text(minutes * 60 - elapsed)} left"
    if fraction > 0:
        return f"{text} · about {duration_text(elapsed / fraction - elapsed)} left"
    return text
