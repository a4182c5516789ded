"""Fixtures shared by the store and job tests: a real store file in tmp_path, its job
queue, and the conv2d example saved in it. Test modules import the ones they use."""
import pytest

from core.ir.serialize import read_document
from core.jobs.queue import JobQueue
from core.store import Store


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "results.db"


@pytest.fixture
def store(store_path):
    with Store(store_path) as s:
        yield s


@pytest.fixture
def queue(store):
    return JobQueue(store)


@pytest.fixture
def conv2d(store, examples_dir):
    """Id of the conv2d example operator in `store`."""
    return store.add_operator(read_document(examples_dir / "conv2d.json"), "conv2d")
