"""What the gallery and the Pareto picture read of the results (core.store.fronts), on a real
store: the counts, origins and points of a pair of objectives, and one card per operator."""

import pytest

from core.ir.serialize import read_document
from core.store import Store, StoreError
from core.store.fronts import both_counts, operator_front, origins, points


def test_a_pair_of_objectives_read_from_a_store(tmp_path, examples_dir):
    with Store(tmp_path / "results.db") as store:
        conv = store.add_operator(read_document(examples_dir / "conv2d.json"), "conv2d", "hand-made")
        dws = store.add_operator(read_document(examples_dir / "depthwise_separable.json"), "dws", "search:mcts")
        for op, latency, flops in ((conv, 2.0, 9e6), (conv, 1.0, 9e6), (dws, 3.0, 1e6), (dws, 4.0, 2e6)):
            store.add_measurement(op, None, {"latency_ms": latency, "flops": flops})
        store.add_operator(read_document(examples_dir / "grouped_conv.json"), "grouped", "search:mcts")  # unmeasured

        assert both_counts(store, [("latency_ms", "flops"), ("latency_ms", "accuracy")]) == {
            ("latency_ms", "flops"): 4,
            ("latency_ms", "accuracy"): 0,
        }
        assert origins(store) == ["hand-made", "search:mcts"]
        assert sorted(points(store, "latency_ms", "flops")) == [
            ("hand-made", 1.0, 9e6),
            ("hand-made", 2.0, 9e6),
            ("search:mcts", 3.0, 1e6),
            ("search:mcts", 4.0, 2e6),
        ]
        front = operator_front(store, "latency_ms", "flops")
        assert [(r["operator_name"], r["latency_ms"]) for r in front] == [("conv2d", 1.0), ("dws", 3.0)]
        assert [r["latency_ms"] for r in operator_front(store, "latency_ms", "flops", "search:mcts")] == [3.0]
        with pytest.raises(StoreError, match="unknown objective name; objectives: latency_ms"):
            points(store, "name", "flops")
