"""What the store keeps: operators once per content, devices by name, measurements with
their trials and derived numbers, scores, and clear messages for malformed results."""

import copy
import json
from pathlib import Path

import pytest

from core.ir.serialize import content_hash, read_document
from core.store import InvalidResult, Store, StoreError, default_store_path


def test_default_path_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("TESSERA_STORE", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_store_path() == Path.home() / ".local/share/tessera/results.db"
    monkeypatch.setenv("TESSERA_STORE", str(tmp_path / "mine.db"))
    assert default_store_path() == tmp_path / "mine.db"
    with Store() as s:
        assert s.path == tmp_path / "mine.db"


def test_same_operator_saved_twice_is_one_row(store, examples_dir):
    doc = read_document(examples_dir / "conv2d.json")
    moved = copy.deepcopy(doc)  # positions, names and bindings are not part of identity
    moved["name"] = "my conv"
    moved["nodes"][0]["pos"] = [5.0, 7.0]
    moved["bindings"]["H"] = 28
    first = store.add_operator(doc, "conv2d", "hand-made")
    assert store.add_operator(moved, "my conv", "search:canvas") == first
    other = store.add_operator(read_document(examples_dir / "grouped_conv.json"), "grouped", "baseline")
    assert other != first
    assert store.db["operators"].count == 2
    row = store.operator(first)
    assert (row["name"], row["origin"], row["hash"]) == ("conv2d", "hand-made", content_hash(doc))
    assert content_hash(row["document"]) == row["hash"]  # the stored canonical form hashes the same


def test_sequences_are_kept_once_per_document(store):
    seq = {"steps": [{"op": "split", "loop": "k", "factor": 8}, {"op": "vectorize", "loop": "k.1"}]}
    a = store.add_sequence(seq, "tile k", "search:sequences")
    assert store.add_sequence(json.loads(json.dumps(seq, sort_keys=True)), "again") == a
    assert store.db["sequences"].count == 1


def test_devices_are_found_by_name(store):
    local = store.add_device("this machine")
    rpc = store.add_device("phone", "rpc", {"tracker": "127.0.0.1:9190", "key": "android"})
    assert store.add_device("phone", "rpc", {"tracker": "127.0.0.1:9191", "key": "android"}) == rpc
    assert [(d["id"], d["name"], d["config"]) for d in store.devices()] == [
        (local, "this machine", {}),
        (rpc, "phone", {"tracker": "127.0.0.1:9191", "key": "android"}),
    ]
    with pytest.raises(StoreError, match="kind must be 'local' or 'rpc', got 'cloud'"):
        store.add_device("x", "cloud")


def test_measurement_with_trials_and_derived_numbers(store, conv2d):
    op = conv2d
    dev = store.add_device("this machine")
    m = store.add_measurement(
        op,
        dev,
        {
            "latency_ms": 2.0,
            "latency_std_ms": 0.1,
            "flops": 4e9,
            "params": 36864,
            "tuned": True,
            "trials": [[0, 9.0], [1, 4.0], [3, 2.5], [4, 2.0]],
            "trial_count": 5,
            "torch_latency_ms": 5.0,
            "bindings": {"C_in": 64, "H": 56},
        },
    )
    store.add_score(
        op,
        {
            "dataset": "cifar10",
            "backbone": "resnet18",
            "epochs": 2,
            "accuracy": 0.8,
            "accuracy_per_epoch": [0.7, 0.8],
            "fisher_potential": 12.5,
        },
    )
    [row] = store.results()
    assert row["measurement_id"] == m
    assert row["gflops"] == pytest.approx(2000.0)  # 4e9 FLOPs in 2 ms
    assert row["speedup"] == pytest.approx(2.5)
    assert (row["tuned"], row["trial_count"], row["device_name"], row["operator_name"]) == (
        1,
        5,
        "this machine",
        "conv2d",
    )
    assert json.loads(row["bindings"]) == {"C_in": 64, "H": 56}
    assert (row["accuracy"], row["fisher_potential"], row["dataset"]) == (0.8, 12.5, "cifar10")
    assert store.trials(m) == [(0, 9.0), (1, 4.0), (3, 2.5), (4, 2.0)]  # trial 2 failed to run
    assert (row["algorithm"], row["layout"], row["schedule_source"]) == (None, None, None)


def test_measurement_variants_are_kept(store, conv2d):
    store.add_measurement(
        conv2d, None, {"latency_ms": 1.0, "algorithm": "gspc", "layout": "NCHW", "schedule_source": "transfer:resnet18"}
    )
    [row] = store.results()
    assert (row["algorithm"], row["layout"], row["schedule_source"]) == ("gspc", "NCHW", "transfer:resnet18")


@pytest.mark.parametrize(
    "result, message",
    [
        ({}, "the measurement is missing field\\(s\\) 'latency_ms'"),
        ({"latency_ms": -1.0}, "latency_ms must be a positive number, got -1.0"),
        ({"latency_ms": "3 ms"}, "latency_ms must be a number, got '3 ms'"),
        ({"latency_ms": float("nan")}, "latency_ms must be a number, got nan"),
        ({"latency_ms": 1.0, "trials": [[0, 1.0], [1, None]]}, "trials\\[1\\]\\[1\\] must be a number, got None"),
        ({"latency_ms": 1.0, "trials": [[0, -1.0]]}, "trials must be \\[trial index >= 0, latency ms > 0\\] pairs"),
        ({"latency_ms": 1.0, "trials": [1.0]}, "trials\\[0\\] must be a list of 2 items, .* got 1.0"),
        ({"latency_ms": 1.0, "tuned": "yes"}, "tuned must be true or false"),
        ({"latency_ms": 1.0, "bindings": {"C_in": 6.5}}, "bindings\\['C_in'\\] must be a whole number, got 6.5"),
        ({"latency_ms": 1.0, "algorithm": 3}, "algorithm must be a string, got 3"),
        ({"latency_ms": 1.0, "algorithm": ""}, "algorithm must be a non-empty string or null"),
        ({"latency": 1.0}, "the measurement has unknown field\\(s\\) 'latency'; it takes latency_ms, "),
        ([1.0], "the measurement must be an object, got \\[1.0\\]"),
    ],
)
def test_malformed_measurements_are_refused_by_field(store, conv2d, result, message):
    with pytest.raises(InvalidResult, match=message):
        store.add_measurement(conv2d, None, result)
    assert store.db["measurements"].count == 0


def test_malformed_score_is_refused(store, conv2d):
    with pytest.raises(InvalidResult, match="the score is missing field\\(s\\) 'dataset'"):
        store.add_score(conv2d, {"backbone": "resnet18"})
    with pytest.raises(InvalidResult, match="the score: dataset must be a non-empty string, got ''"):
        store.add_score(conv2d, {"dataset": "", "backbone": "resnet18"})
    with pytest.raises(InvalidResult, match="the score: accuracy must be a number, got nan"):
        store.add_score(conv2d, {"dataset": "digits", "backbone": "resnet18", "accuracy": float("nan")})
    assert store.db["scores"].count == 0


def test_deleting_measurements_keeps_operators_and_drops_trials(store, conv2d):
    keep = store.add_measurement(conv2d, None, {"latency_ms": 1.0})
    gone = store.add_measurement(conv2d, None, {"latency_ms": 2.0, "trials": [[0, 3.0], [1, 2.0]]})
    assert store.delete_measurements([gone, 999]) == 1
    assert [r["measurement_id"] for r in store.results()] == [keep]
    assert store.trials(gone) == [] and store.db["operators"].count == 1


def test_renaming_an_operator(store, conv2d):
    store.rename_operator(conv2d, "  my conv ")
    assert store.operator(conv2d)["name"] == "my conv"
    with pytest.raises(StoreError, match="needs a non-empty name"):
        store.rename_operator(conv2d, " ")
    with pytest.raises(StoreError, match="no operator 999 in"):
        store.rename_operator(999, "x")
