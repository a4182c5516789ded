"""The `sequence` algorithm (core.compile.kernels.sequence_schedule): an operator found by a
transformation sequence timed with the sequence's own schedule, or MetaSchedule's on the
sequence's loop nest, checked against the operator's torch module like every kernel."""

from __future__ import annotations

import json

import pytest

from core.codegen.loopnest_ir import checked_sequence, result_operator
from core.compile.algorithms import algorithms_for
from core.compile.errors import CompileError
from core.compile.handlers import measure_job
from core.compile.requests import MeasureRequest
from core.devices import get_device
from core.ir.sequence import load_sequence, sequence_document
from core.ir.serialize import graph_from_document, to_document
from core.jobs.submit import result_subjects
from core.store import Store
from tests.support import EXAMPLES, QUICK, Ctx, tessera

pytestmark = [pytest.mark.tvm, pytest.mark.usefixtures("restore_threads")]

SEQUENCES = sorted((EXAMPLES / "sequences").glob("*.json"))


def _operator(path, name: str = "found") -> tuple[dict, dict]:
    """(the operator document a sequence file makes, the sequence's document)."""
    seq = load_sequence(path)
    graph = result_operator(checked_sequence(seq).final, name).graph
    return to_document(graph), sequence_document(seq)


@pytest.mark.parametrize("path", SEQUENCES, ids=lambda p: p.stem)
def test_every_bundled_sequence_runs_its_own_schedule_and_matches_torch(path):
    operator, sequence = _operator(path)
    payload = {"operator": operator, "sequence": sequence, "algorithm": "sequence", **QUICK}
    result = measure_job(payload, Ctx())
    assert result.algorithm == "sequence" and result.max_abs_error < 1e-4
    assert result.algorithm_details == {
        "schedule": "the sequence's own",
        "sequence_steps": len(load_sequence(path).steps),
    }


@pytest.mark.slow
def test_tuning_runs_metaschedule_on_the_sequence_nest_and_keeps_the_faster(tmp_path):
    operator, sequence = _operator(EXAMPLES / "sequences" / "seq_split_group.json")
    payload = {
        "operator": operator,
        "sequence": sequence,
        "algorithm": "sequence",
        "tune_trials": 2,
        "cost_model": "random",
        "tuning_root": str(tmp_path),
        **QUICK,
    }
    result = measure_job(payload, Ctx())
    assert result.trial_count == 2 and result.max_abs_error < 1e-4
    expected = "MetaSchedule's, on the sequence's nest" if result.tuned else "the sequence's own"
    assert result.algorithm_details["schedule"] == expected


def test_an_operator_without_its_sequence_is_refused_with_the_reason():
    conv = json.loads((EXAMPLES / "conv2d.json").read_text())
    with pytest.raises(CompileError, match="'sequence' runs the schedule of the transformation sequence"):
        measure_job({"operator": conv, "algorithm": "sequence", **QUICK}, Ctx())
    path = EXAMPLES / "sequences" / "seq_grouped_conv.json"
    operator, sequence = _operator(path)
    graph = graph_from_document(operator)
    assert "sequence" not in algorithms_for(graph, graph.bindings)[0]
    assert "sequence" in algorithms_for(graph, graph.bindings, sequence=True)[0]
    # a sequence beside an operator it does not make: the nest's weights do not fit
    other, _ = _operator(EXAMPLES / "sequences" / "seq_split_group.json")
    with pytest.raises(CompileError, match="it is not the operator this sequence makes"):
        measure_job({"operator": other, "sequence": sequence, "algorithm": "sequence", **QUICK}, Ctx())


def test_a_sequence_result_in_the_store_is_measured_with_its_sequence(tmp_path):
    operator, sequence = _operator(EXAMPLES / "sequences" / "seq_unroll_group.json")
    with Store(tmp_path / "results.db") as store:
        found = store.add_operator(operator, "sequences-1", "search:sequences", sequence)
        (subject,) = result_subjects(store, [{"operator_id": found, "bindings": None}])
        assert subject.sequence == sequence
        payloads, _ = MeasureRequest(variants=True).payloads(subject, {}, get_device(store, "local"))
        assert "sequence" in {p.algorithm for p in payloads}
        (only,), _ = MeasureRequest(algorithm="sequence").payloads(subject, {}, get_device(store, "local"))
        assert only.sequence == sequence


def test_cli_measures_a_sequence_file_with_its_own_schedule():
    path = EXAMPLES / "sequences" / "seq_grouped_conv.json"
    out = tessera("measure", str(path), "--bind", "C_in=16,C_out=16,H=8,W=8", "--repeat", "2", "--min-repeat-ms", "2")
    assert out.returncode == 0, out.stderr
    assert "algorithm sequence, layout NCHW, schedule the sequence's own" in out.stdout
    assert "C_in=16" in out.stdout and "max abs error vs PyTorch" in out.stdout

    bad = tessera("measure", str(EXAMPLES / "conv2d.json"), "--algorithm", "sequence")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "this one comes without a sequence" in bad.stderr
