"""The columns of the results view as the explorer shows them: titles, number formats,
which ones can be plot axes, and one colour per origin (hand-made, each search, baseline, reference).

Which columns exist, which hold numbers and the names a filter accepts are the store's
(core.store.result_fields); this adds how the window shows each. Qt-free."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from core.store import RESULT_OBJECTIVES
from core.store.measurement import speedup_text
from core.store.result_fields import FIELDS

from . import theme
from .formatting import human


def _number(value: float) -> str:
    if abs(value) >= 1e4 or (value and abs(value) < 1e-3):
        return f"{value:.3g}"
    return f"{value:.4g}"


def _bindings(text: str) -> str:
    try:
        bindings = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return text
    return ", ".join(f"{k}={v}" for k, v in bindings.items())


def _time(value: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(value))


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def _test_accuracy(record: dict) -> str:
    """'0.912 ± 0.004 (3 seeds)': the mean over the seeds, their spread and how many."""
    std, seeds = record.get("test_accuracy_std"), record.get("test_seeds")
    spread = "" if std is None else f" ± {std:.3f}"
    return f"{record['test_accuracy']:.3f}{spread}" + (f" ({seeds} seeds)" if seeds else "")


def _test_difference(record: dict) -> str:
    """'-0.3 [-0.9, +0.4]': points against the original, seed by seed, and the 95% interval."""
    low, high = record.get("test_difference_low"), record.get("test_difference_high")
    interval = "" if low is None or high is None else f" [{_points(low)}, {_points(high)}]"
    return _points(record["test_difference"]) + interval


def _speedup(record: dict) -> str:
    """'3.10× [2.95, 3.31]': over PyTorch, the median of paired rounds and its 95% interval."""
    return speedup_text(record["speedup"], record.get("speedup_low"), record.get("speedup_high"), sign="×")


@dataclass(frozen=True)
class Column:
    key: str  # column of the store's results view
    title: str  # table header
    fmt: Callable = _number  # value (never None) -> text
    axis: str | None = None  # axis label when the column can be a plot axis
    log: bool = True  # a plot axis of it starts logarithmic (costs and times span decades)
    bounds: tuple[float, float] | None = None  # the values it can take, e.g. accuracy in 0..1
    row_fmt: Callable[[dict], str] | None = None  # the text from the whole row, where it joins several columns

    @property
    def numeric(self) -> bool:
        return FIELDS[self.key].numeric

    @property
    def direction(self) -> str | None:
        """'min' or 'max' for a Pareto objective, None otherwise."""
        return RESULT_OBJECTIVES.get(self.key)

    def text(self, value) -> str:
        return "" if value is None else self.fmt(value)


COLUMNS: tuple[Column, ...] = (
    Column("measurement_id", "#", fmt=lambda v: str(int(v))),
    Column("operator_name", "Operator", fmt=str),
    Column("origin", "Origin", fmt=str),
    Column("device_name", "Device", fmt=str),
    Column("bindings", "Bindings", fmt=_bindings),
    Column("latency_ms", "Latency (ms)", axis="Latency (ms)"),
    Column("latency_std_ms", "± (ms)"),
    Column("gflops", "GFLOP/s", axis="GFLOP/s"),
    Column("flops", "FLOPs", fmt=lambda v: human(round(v)), axis="FLOPs"),
    Column("params", "Params", fmt=lambda v: human(round(v)), axis="Parameters"),
    Column("tuned", "Tuned", fmt=lambda v: "yes" if v else "no"),
    Column("trial_count", "Trials", fmt=lambda v: str(int(v))),
    Column("algorithm", "Algorithm", fmt=str),
    Column("layout", "Layout", fmt=str),
    Column("schedule_source", "Schedule", fmt=str),
    Column("torch_latency_ms", "PyTorch (ms)"),
    Column("speedup", "Speedup", fmt=lambda v: f"{v:.2f}×", axis="Speedup vs PyTorch", row_fmt=_speedup),
    Column("max_abs_error", "Max error", fmt=lambda v: f"{v:.2g}"),
    Column("timing_note", "Timing", fmt=str),
    Column("accuracy", "Accuracy", axis="Accuracy", log=False, bounds=(0.0, 1.0)),
    Column(
        "test_accuracy",
        "Test accuracy",
        axis="Test accuracy (mean over seeds)",
        log=False,
        bounds=(0.0, 1.0),
        row_fmt=_test_accuracy,
    ),
    Column(
        "test_difference",
        "Test vs original (points)",
        axis="Test accuracy minus the original's (points, paired over seeds)",
        log=False,
        row_fmt=_test_difference,
    ),
    Column("fisher_potential", "Fisher Potential", axis="Fisher Potential"),
    Column("e2e_latency_ms", "Network (ms)", axis="Network latency (ms)"),
    Column(
        "e2e_speedup",
        "Network speedup",
        fmt=lambda v: f"{v:.2f}×",
        axis="End-to-end speedup (tuned, vs the original)",
        log=False,  # around 1x: ticks on a linear axis read better
    ),
    Column("created", "Measured", fmt=_time),
)
BY_KEY = {c.key: c for c in COLUMNS}
#: columns that come from timing the kernel: marked DOUBT when the result's timing_note says it is unreliable
TIMED = frozenset({"latency_ms", "latency_std_ms", "gflops", "torch_latency_ms", "speedup"})
DOUBT = " ⚠"


def cell_text(record: dict, key: str) -> str:
    """The text of a result's value in column `key`, marked when its timing is in doubt."""
    column = BY_KEY[key]
    if column.row_fmt is not None and record.get(key) is not None:
        text = column.row_fmt(record)
    else:
        text = column.text(record.get(key))
    return text + DOUBT if text and key in TIMED and record.get("timing_note") else text


AXES = tuple(c for c in COLUMNS if c.axis)
#: what names a result: a panel's title and subtitle, a comparison's headers, not among its figures
IDENTITY = ("measurement_id", "operator_name", "origin", "device_name", "bindings")
#: what is known of one result beyond its identity, in the table's order (the result panel's rows;
#: the timing note is said in words under them)
FIGURES = tuple(c.key for c in COLUMNS if c.key not in IDENTITY and c.key != "timing_note")
#: numeric columns every plotted point carries (loaded for all results, not paged): the axes, and
#: whether its timing is in doubt (drawn hollow, kept off a timed front)
FRAME_COLUMNS = (*(c.key for c in AXES), "in_doubt")

ORIGIN_COLORS = {
    "hand-made": "#2563eb",
    "baseline": "strong",  # the scheme's strongest text colour: near-black on light, near-white on dark
    "reference": "#64748b",  # a discovery run's references (the narrowed original, ...): grey, beside the baseline
    "search:canvas": "#d97706",
    "search:mcts": "#7c3aed",
    "search:sequences": "#0d9488",
}
EXTRA_COLORS = ("#db2777", "#16a34a", "#0891b2", "#b45309", "#4f46e5", "#be123c")


def origin_color(origin: str, known: list[str]) -> str:
    """A stable colour per origin; origins without a fixed one take the next spare colour
    in order of appearance (`known` is the frame's list of origins)."""
    if origin in ORIGIN_COLORS:
        return theme.COLORS.get(ORIGIN_COLORS[origin], ORIGIN_COLORS[origin])
    spare = [o for o in known if o not in ORIGIN_COLORS]
    index = spare.index(origin) if origin in spare else len(spare)
    return EXTRA_COLORS[index % len(EXTRA_COLORS)]
