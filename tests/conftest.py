"""Fixtures shared by every test package: the examples folder, a real store file with its job
queue and one with a damaged page, a loopback RPC cluster, thread counts restored after a
measurement, the operator documents read while a test runs, and conv2d tuned once for the
transfer-tuning tests."""

from __future__ import annotations

from pathlib import Path

import pytest

import core.ir.serialize
from core.ir.serialize import read_document
from core.jobs.queue import JobQueue
from core.store import Store
from tests.store_damage import build_store, damage_page
from tests.support import EXAMPLES, QUICK, TINY


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture
def operator_parses(monkeypatch) -> list[str]:
    """The source named by every operator document read (core.ir.serialize.graph_from_document,
    which checks each one's header first) from here to the end of the test."""
    sources: list[str] = []
    check = core.ir.serialize.check_header

    def counted(doc, fmt, version, source):
        if fmt == core.ir.serialize.FORMAT:
            sources.append(source)
        return check(doc, fmt, version, source)

    monkeypatch.setattr(core.ir.serialize, "check_header", counted)
    return sources


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "results.db"


@pytest.fixture
def store(store_path):
    with Store(store_path) as s:
        yield s


@pytest.fixture
def damaged_store(tmp_path, examples_dir) -> Path:
    """A real store file of store_damage.ROWS measurements, one of its pages damaged."""
    path = tmp_path / "results.db"
    build_store(path, examples_dir)
    damage_page(path, b"marker-00500")
    return path


@pytest.fixture
def queue(store):
    return JobQueue(store)


@pytest.fixture
def conv2d(store, examples_dir):
    """Id of the conv2d example operator in `store`."""
    return store.add_operator(read_document(examples_dir / "conv2d.json"), "conv2d")


@pytest.fixture(scope="module")
def rpc_cluster(tmp_path_factory):
    """A tracker and two servers of key 'loopcpu' on 127.0.0.1; all their processes are gone after."""
    from tests.core.rpc_loopback import start_cluster

    cluster = start_cluster(tmp_path_factory.mktemp("rpc"), "loopcpu", servers=2)
    yield cluster
    assert cluster.stop() == [], "some tracker or server processes did not stop on SIGTERM"


@pytest.fixture
def restore_threads(monkeypatch):
    """Measuring sets TVM_NUM_THREADS and torch's thread count; give both back."""
    import torch

    monkeypatch.setenv("TVM_NUM_THREADS", "1")
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tuned_root(tmp_path_factory):
    """A tuning root holding conv2d tuned at TINY sizes with 4 trials (as `tessera measure` tunes),
    tuned once for the transfer-tuning tests of core and of `tessera tune`."""
    from core.jobs.isolate import call_in_subprocess

    root = tmp_path_factory.mktemp("tuning")
    payload = {
        "operator": read_document(EXAMPLES / "conv2d.json"),
        "bindings": TINY,
        "tune_trials": 4,
        "cost_model": "random",
        "device": "local",
        "tuning_root": str(root),
        **QUICK,
    }
    result = call_in_subprocess("core.compile.handlers:measure_call", {"payload": payload})
    assert result["trial_count"] == 4 and result["best_trial_ms"] > 0
    return root
