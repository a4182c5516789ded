"""A store holding four variants of one operator's measurement, for the variants views and
`tessera results --variants`."""

from __future__ import annotations

from core.ir.serialize import read_document
from core.store import Store


def add_variants(db, examples_dir) -> list[int]:
    """grouped_conv measured as four variants at G=4 on local, plus two that are not its variants
    (other sizes, another device); returns the four variants' ids."""
    sizes = {"C_in": 16, "G": 4}
    with Store(db) as store:
        op = store.add_operator(read_document(examples_dir / "grouped_conv.json"), "grouped_conv")
        local, board = store.add_device("local"), store.add_device("board", "rpc")
        made = [
            (local, sizes, 4.0, "default", "NCHW", "untuned", False, 0),
            (local, sizes, 1.0, "gspc", "NCHW4c", "tuned", True, 8),
            (local, sizes, 2.0, "default", "NCHW", "transfer:local/abc trial 3", True, 0),
            (local, sizes, 3.0, "gspc", "NCHW4c", "untuned", False, 0),
            (local, {**sizes, "G": 8}, 0.5, "default", "NCHW", "untuned", False, 0),
            (board, sizes, 9.0, "default", "NCHW", "untuned", False, 0),
        ]
        return [
            store.add_measurement(
                op,
                device,
                {
                    "latency_ms": ms,
                    "latency_std_ms": 0.01,
                    "gflops": 10 / ms,
                    "torch_latency_ms": 2.0,
                    "bindings": b,
                    "algorithm": algorithm,
                    "layout": layout,
                    "schedule_source": source,
                    "tuned": tuned,
                    "trial_count": trials,
                },
            )
            for device, b, ms, algorithm, layout, source, tuned, trials in made
        ][:4]
