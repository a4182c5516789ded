"""The columns of the store's results view by name, as users type them: in the window's
filter box and in `tessera results --filter`. Presentation (titles, number formats, plot
axes) belongs to the views; which columns exist, which hold numbers and their short
names are facts of the store, so the CLI and the window read one list."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResultField:
    key: str  # column of the results view
    numeric: bool = True
    aliases: tuple[str, ...] = ()  # shorter names accepted in filters

    @property
    def short(self) -> str:
        """The name to suggest: the first alias, else the key."""
        return self.aliases[0] if self.aliases else self.key


RESULT_FIELDS: tuple[ResultField, ...] = (
    ResultField("measurement_id", aliases=("id",)),
    ResultField("operator_name", numeric=False, aliases=("name", "operator")),
    ResultField("origin", numeric=False),
    ResultField("device_name", numeric=False, aliases=("device",)),
    ResultField("bindings", numeric=False),
    ResultField("latency_ms", aliases=("latency",)),
    ResultField("latency_std_ms", aliases=("std",)),
    ResultField("gflops"),
    ResultField("flops"),
    ResultField("params"),
    ResultField("tuned"),
    ResultField("trial_count", aliases=("trials",)),
    ResultField("algorithm", numeric=False),
    ResultField("layout", numeric=False),
    ResultField("schedule_source", numeric=False, aliases=("schedule",)),
    ResultField("torch_latency_ms", aliases=("torch",)),
    ResultField("speedup"),
    ResultField("speedup_low"),
    ResultField("speedup_high"),
    ResultField("in_doubt", aliases=("doubt",)),
    ResultField("max_abs_error", aliases=("error",)),
    ResultField("timing_note", numeric=False, aliases=("timing",)),
    ResultField("accuracy", aliases=("acc",)),
    ResultField("fisher_potential", aliases=("fisher",)),
    ResultField("e2e_latency_ms", aliases=("e2e", "network")),
    ResultField("e2e_speedup"),
    ResultField("e2e_torch_ms", aliases=("eager",)),
    ResultField("e2e_torch_baseline_ms", aliases=("eager_original",)),
    ResultField("test_accuracy", aliases=("test",)),
    ResultField("test_accuracy_std", aliases=("test_std",)),
    ResultField("test_seeds", aliases=("seeds",)),
    ResultField("test_difference", aliases=("difference", "diff")),
    ResultField("test_difference_low", aliases=("diff_low",)),
    ResultField("test_difference_high", aliases=("diff_high",)),
    ResultField("test_margin", aliases=("margin",)),
    ResultField("created", aliases=("date",)),
)
FIELDS = {f.key: f for f in RESULT_FIELDS}
#: every name a filter may use (keys and aliases, lower case) -> its field
BY_NAME = {**FIELDS, **{a: f for f in RESULT_FIELDS for a in f.aliases}}
#: the columns searched by a plain word of a filter
TEXT_FIELDS = ("operator_name", "origin", "device_name", "bindings")
NUMERIC = frozenset(f.key for f in RESULT_FIELDS if f.numeric)
