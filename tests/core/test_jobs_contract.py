"""The job contract (core.jobs.contract, registry, submit): every kind declared as an entry
point loads; every declared kind's payload reads back what it wrote and refuses unknown,
missing and mistyped fields by name; one submit() queues a request's jobs all or none."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

import pytest

from core.compile.errors import CompileError
from core.compile.payloads import MeasurePayload, TransferPayload
from core.compile.requests import MeasureRequest
from core.errors import TesseraError
from core.ir.serialize import read_document
from core.jobs import registry
from core.jobs.code_paths import resolve
from core.jobs.errors import PayloadError
from core.jobs.queue import JobQueue
from core.jobs.registry import GROUP, JobKind, cluster_kinds, job_kinds
from core.jobs.submit import PlannedJob, Subject, submit
from core.networks.settings import DeploySettings
from core.search.payloads import SearchPayload
from core.store import Store
from core.train.payloads import E2EPayload, FisherPayload, HeldOutPayload, TrainPayload
from core.train.settings import EvalSettings, TrainConfig
from tests.support import EXAMPLES

DOC = read_document(EXAMPLES / "conv2d.json")
SAMPLES = {
    "measure": MeasurePayload(DOC, {"C_in": 8}, tune_trials=4, algorithm="gspc", tiles=(4, 2)),
    "transfer": TransferPayload(DOC, sources=("/tuning",), top_k=2),
    "fisher": FisherPayload(DOC, EvalSettings(width=8)),
    "train": TrainPayload(DOC, EvalSettings(width=8), TrainConfig(epochs=2), best_curve=(0.5, 0.75)),
    "test": HeldOutPayload(DOC, EvalSettings(width=8), TrainConfig(epochs=2), (1, 2), original=(0.9, None)),
    "e2e": E2EPayload(DOC, DeploySettings("vgg", width=8, sources=("/a",)), EvalSettings(backbone="vgg")),
    "search": SearchPayload({"template": DOC, "strategy": "mcts"}),
}


def test_every_declared_kind_has_a_sample_and_a_handler():
    kinds = job_kinds()
    assert set(kinds) == set(SAMPLES)
    for name, kind in kinds.items():
        assert callable(resolve(kind.handler)) and isinstance(SAMPLES[name], kind.payload)
    assert set(cluster_kinds()) == {"fisher", "train", "test"}


def test_every_entry_point_of_the_group_is_the_job_kind_it_names():
    """pyproject.toml declares the kinds; each entry point loads the JobKind of its name."""
    points = entry_points(group=GROUP)
    assert sorted(p.name for p in points) == sorted(SAMPLES)
    for point in points:
        kind = point.load()
        assert isinstance(kind, JobKind) and kind.name == point.name and callable(resolve(kind.handler))


def test_an_entry_point_naming_another_kind_is_refused(monkeypatch):
    wrong = EntryPoint("measure", "core.train.kinds:TRAIN", GROUP)
    monkeypatch.setattr(registry, "_KINDS", {})
    monkeypatch.setattr(registry, "entry_points", lambda group: [wrong])
    with pytest.raises(TypeError, match="entry point measure = core.train.kinds:TRAIN is not the JobKind named"):
        job_kinds()


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_a_payload_reads_back_what_it_wrote(kind):
    payload = SAMPLES[kind]
    assert type(payload).from_dict(payload.to_dict()) == payload


@pytest.mark.parametrize(
    "kind, change, message",
    [
        (
            "measure",
            {"tune_trails": 4},
            r"the measure payload has unknown field\(s\) 'tune_trails'; it takes operator,",
        ),
        ("measure", {"tiles": [4]}, r"the measure payload: tiles must be a list of 2 items, each a whole number"),
        ("measure", {"tune_trials": True}, r"tune_trials must be a whole number, got True"),
        ("transfer", {"sources": "/one"}, r"sources must be a list of which each is a string, got '/one'"),
        ("train", {"settings": {"width": "8"}}, r"the train payload: settings: width must be a whole number"),
        ("train", {"training": {"epoch": 2}}, r"the train payload: training has unknown field\(s\) 'epoch'"),
        ("train", {"best_curve": [0.5, "x"]}, r"the train payload: best_curve\[1\] must be a number"),
        ("test", {"seeds": [1, 1]}, r"the test payload: seeds must be distinct seeds, at least one, got \(1, 1\)"),
        ("test", {"original": [0.9] * 3}, r"the test payload: original must be at most one accuracy per seed \(2\)"),
        ("e2e", {"deploy": None}, r"the e2e payload: deploy must be an object, got None"),
        ("search", {"config": []}, r"the search payload: config must be an object, got \[\]"),
    ],
)
def test_a_bad_field_is_refused_by_name(kind, change, message):
    with pytest.raises(PayloadError, match=message):
        type(SAMPLES[kind]).from_dict({**SAMPLES[kind].to_dict(), **change})


def test_a_missing_field_is_refused_by_name():
    with pytest.raises(PayloadError, match=r"the e2e payload is missing field\(s\) 'deploy'"):
        E2EPayload.from_dict({"operator": DOC})
    with pytest.raises(PayloadError, match="the fisher payload must be an object"):
        FisherPayload.from_dict([DOC])


@dataclass(frozen=True)
class _TwoTargets:
    """A request whose second target cannot be planned."""

    def plan(self, store):
        planned = []
        for name in ("conv2d", "broken"):
            operator_id, _ = Subject(DOC, name).save(store)
            if name == "broken":
                raise TesseraError("broken: cannot be measured")
            planned.append(PlannedJob(MeasurePayload(DOC), operator_id))
        return planned, []


def test_submit_queues_all_jobs_or_none(tmp_path):
    with Store(tmp_path / "r.db") as store:
        with pytest.raises(TesseraError, match="broken"):
            submit(store, _TwoTargets())
        assert JobQueue(store).jobs() == [] and store.db["operators"].count == 0  # nothing half-queued


def test_sizes_that_can_never_be_built_are_refused_when_submitted(tmp_path):
    """Not later by a worker: a tensor beyond what TVM indexes, named, and nothing queued."""
    huge = {"C_in": 65536, "C_out": 64, "H": 65536, "W": 2, "K": 3}
    request = MeasureRequest((Subject(DOC, "conv2d"),), bindings_sets=(huge,))
    with Store(tmp_path / "r.db") as store:
        with pytest.raises(CompileError, match="conv2d cannot be built at C_in=65536.*more than 2\\^31 - 1"):
            submit(store, request)
        assert JobQueue(store).jobs() == []
