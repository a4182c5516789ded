"""The variants of one operator on one device at one set of sizes: every measurement of it,
whichever algorithm, layout and schedule (untuned, tuned, reused by transfer-tuning) ran,
as one comparison table for `tessera results --variants` and the explorer's Variants view.

The baseline is TVM's default algorithm untuned, the schedule every other variant has
to beat; without one, the slowest variant."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import StoreError
from .stored_values import stored_json


@dataclass(frozen=True)
class Variant:
    measurement_id: int
    algorithm: str  # 'default' (TVM's lowering), 'gspc', ...
    label: str  # 'default · untuned', 'gspc · tuned (32 trials)', 'default · reused'
    layout: str
    schedule: str  # the schedule's source: untuned, tuned, transfer:<database> trial <n>
    latency_ms: float
    latency_std_ms: float | None
    gflops: float | None
    torch_latency_ms: float | None
    vs_baseline: float  # the baseline's latency over this one's: > 1 is faster

    @property
    def vs_torch(self) -> float | None:
        return self.torch_latency_ms / self.latency_ms if self.torch_latency_ms else None


HEADER = ("id", "variant", "layout", "schedule", "median ms", "± ms", "GFLOP/s", "vs PyTorch", "vs baseline")


def _number(value: float | None, fmt: str = ".4g", suffix: str = "") -> str:
    return "-" if value is None else f"{value:{fmt}}{suffix}"


@dataclass(frozen=True)
class Variants:
    operator: str
    device: str
    bindings: dict[str, int]
    baseline: str  # the label the speed-ups are relative to
    rows: list[Variant]  # fastest first

    def title(self) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.bindings.items()) or "no bindings"
        return f"{self.operator} at {sizes} on {self.device}: {len(self.rows)} measurement(s), vs {self.baseline}"

    def table(self) -> list[tuple[str, ...]]:
        """HEADER's cells of every variant, fastest first."""
        return [
            (
                str(v.measurement_id),
                v.label,
                v.layout or "-",
                v.schedule or "-",
                _number(v.latency_ms),
                _number(v.latency_std_ms, ".2g"),
                _number(v.gflops, ".3g"),
                _number(v.vs_torch, ".2f", "x"),
                _number(v.vs_baseline, ".2f", "x"),
            )
            for v in self.rows
        ]


def variant_label(row: dict) -> str:
    """How a results row was made: its algorithm and where its schedule came from."""
    source = row.get("schedule_source") or ("tuned" if row.get("tuned") else "untuned")
    if source.startswith("transfer:"):
        how = "reused schedule"
    elif source == "tuned" and row.get("trial_count"):
        how = f"tuned ({row['trial_count']} trials)"
    else:
        how = source
    return f"{row.get('algorithm') or 'default'} · {how}"


def read_variants(store, measurement_id: int) -> Variants:
    """Every measurement of `measurement_id`'s operator on its device at its bindings."""
    rows = list(store.results("measurement_id = ?", [measurement_id]))
    if not rows:
        raise StoreError(f"there is no measurement {measurement_id} in {store.path}")
    first = rows[0]
    sizes = stored_json(first["bindings"] or "{}", "results", first["result_key"], "bindings")
    same = [
        r
        for r in store.results(
            "measurement_id IS NOT NULL AND operator_id = ? AND device_id IS ? AND latency_ms IS NOT NULL",
            [first["operator_id"], first["device_id"]],
            order_by="latency_ms, measurement_id",
        )
        if stored_json(r["bindings"] or "{}", "results", r["result_key"], "bindings") == sizes
    ]
    if not same:
        raise StoreError(f"measurement {measurement_id} has no latency to compare")
    baseline = next((r for r in same if variant_label(r) == "default · untuned"), None) or same[-1]
    return Variants(
        first["operator_name"] or f"operator {first['operator_id']}",
        first["device_name"] or "-",
        sizes,
        variant_label(baseline),
        [
            Variant(
                r["measurement_id"],
                r["algorithm"] or "default",
                variant_label(r),
                r["layout"] or "",
                r["schedule_source"] or "",
                r["latency_ms"],
                r["latency_std_ms"],
                r["gflops"],
                r["torch_latency_ms"],
                baseline["latency_ms"] / r["latency_ms"],
            )
            for r in same
        ],
    )
