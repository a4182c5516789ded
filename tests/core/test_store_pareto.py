"""Pareto fronts: the fast numpy methods agree with an O(N^2) definition on random data
with ties and duplicates; the store gives the front over columns of its results view."""

import numpy as np
import pytest

from core.ir.serialize import read_document
from core.store import MAXIMIZE, MINIMIZE, StoreError, pareto_front


def brute_force_front(values: np.ndarray, directions) -> np.ndarray:
    """Straight from the definition: i is on the front unless some j is at least as good
    everywhere and strictly better somewhere."""
    costs = values * np.where(np.array(directions) == MAXIMIZE, -1.0, 1.0)
    keep = []
    for i in range(len(costs)):
        dominated = ((costs <= costs[i]).all(axis=1) & (costs < costs[i]).any(axis=1)).any()
        if not dominated:
            keep.append(i)
    return np.array(keep, dtype=np.intp)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_matches_brute_force_with_ties_and_duplicates(k, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    values = rng.integers(0, 12, size=(n, k)).astype(float)  # few distinct values: many ties
    values = np.concatenate([values, values[rng.integers(0, n, size=n // 4)]])  # exact duplicates
    directions = list(rng.choice([MINIMIZE, MAXIMIZE], size=k))
    np.testing.assert_array_equal(pareto_front(values, directions), brute_force_front(values, directions))


@pytest.mark.parametrize("k", [2, 3])
def test_matches_brute_force_on_continuous_data(k):
    values = np.random.default_rng(42).normal(size=(1500, k))
    directions = [MINIMIZE] * k
    np.testing.assert_array_equal(pareto_front(values, directions), brute_force_front(values, directions))


def test_small_cases():
    assert pareto_front(np.empty((0, 2)), [MINIMIZE, MINIMIZE]).tolist() == []
    assert pareto_front([[1.0, 1.0]], [MINIMIZE, MINIMIZE]).tolist() == [0]
    # duplicates of a front point are all on it; a point equal in x but worse in y is not
    assert pareto_front([[1, 5], [1, 5], [1, 6], [2, 1], [3, 1]], [MINIMIZE, MINIMIZE]).tolist() == [0, 1, 3]
    # latency (min) against accuracy (max)
    assert pareto_front([[1, 0.5], [2, 0.9], [3, 0.8], [0.5, 0.1]], [MINIMIZE, MAXIMIZE]).tolist() == [0, 1, 3]
    assert pareto_front([[np.inf, 0.0], [1.0, np.inf]], [MINIMIZE, MINIMIZE]).tolist() == [0, 1]


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="expected an \\(N, 2\\) array"):
        pareto_front(np.zeros((3, 3)), [MINIMIZE, MINIMIZE])
    with pytest.raises(ValueError, match="direction must be 'min' or 'max', got 'up'"):
        pareto_front(np.zeros((3, 2)), [MINIMIZE, "up"])
    with pytest.raises(ValueError, match="NaN"):
        pareto_front([[np.nan, 1.0]], [MINIMIZE, MINIMIZE])


def test_store_front_over_results_columns(store, examples_dir):
    ops = [store.add_operator(read_document(p), p.stem) for p in sorted(examples_dir.glob("*.json"))[:4]]
    # (latency, flops, accuracy) per operator; accuracy comes from the scores table
    table = [(4.0, 9e9, 0.90), (2.0, 5e9, 0.85), (3.0, 2e9, 0.80), (5.0, 9e9, 0.70)]
    for op, (latency, flops, accuracy) in zip(ops, table):
        store.add_measurement(op, None, {"latency_ms": latency, "flops": flops})
        store.add_score(op, {"dataset": "cifar10", "backbone": "resnet18", "accuracy": accuracy})
    store.add_measurement(ops[0], None, {"latency_ms": 1.0})  # no flops: left out of flops fronts

    front = store.pareto(["latency_ms", "flops"])
    assert [(r["latency_ms"], r["flops"]) for r in front] == [(2.0, 5e9), (3.0, 2e9)]
    front = store.pareto(["latency_ms", "accuracy"])
    assert [(r["latency_ms"], r["accuracy"]) for r in front] == [(1.0, 0.90)]
    front = store.pareto(["latency_ms", "flops", "accuracy"])
    assert [r["latency_ms"] for r in front] == [2.0, 3.0, 4.0]
    assert store.pareto(["latency_ms", "flops"], [MAXIMIZE, MAXIMIZE])[0]["latency_ms"] == 5.0
    with pytest.raises(StoreError, match="needs 2 or 3 of latency_ms.*; got latency_ms, colour"):
        store.pareto(["latency_ms", "colour"])
