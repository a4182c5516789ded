"""The stage counts of a discovery run, read from a real store: a candidate is in flight only
while its job is queued or running (a stopped run's candidates wait to resume, they are not
in flight; one trained before the original waits as a stage of its own, and counts as
trained), and one kept within the margin with end-to-end timing off is not counted tuned. A
stage that is none of Stage's is refused, and nothing is written."""

from __future__ import annotations

import pytest

from core.ir.serialize import read_document
from core.jobs.queue import JobQueue
from core.search.stages import Stage, stage_counts
from core.store.searches import candidates, open_run, set_stage
from tests.support import EXAMPLES


def test_in_flight_counts_live_jobs_and_tuned_only_timed_candidates(store):
    run = open_run(store, "key", "a run", {})
    queue = JobQueue(store)
    examples = sorted(EXAMPLES.glob("*.json"))[:5]
    ids = [store.add_operator(read_document(path), path.stem) for path in examples]
    document = read_document(examples[0])
    running = queue.submit("fisher", {"operator": document}, operator_id=ids[0])
    stopped = queue.submit("train", {"operator": document}, operator_id=ids[1])
    queue.cancel(stopped, "the discovery run was stopped")
    set_stage(store, run, ids[0], "screening", job_id=running)
    set_stage(store, run, ids[1], "training", job_id=None)  # its job was stopped with the run: to resume
    set_stage(store, run, ids[2], "within margin", accuracy=0.9)  # end-to-end timing off
    set_stage(store, run, ids[3], "tuned", accuracy=0.9, e2e_speedup=1.2)
    set_stage(store, run, ids[4], Stage.WAITING_FOR_ORIGINAL, job_id=stopped, accuracy=0.5)
    counts = stage_counts(candidates(store, run))
    assert counts["proposed"] == 5 and counts["in flight"] == 1 and counts["waiting"] == 2
    assert counts["within margin"] == 2 and counts["tuned"] == 1 and counts["trained"] == 3


def test_an_unknown_stage_is_refused_by_name(store):
    run = open_run(store, "key", "a run", {})
    operator = store.add_operator(read_document(EXAMPLES / "conv2d.json"), "conv2d")
    set_stage(store, run, operator, Stage.SCREENING)
    with pytest.raises(ValueError, match="unknown stage 'screend' of a discovery candidate: one of screening, "):
        set_stage(store, run, operator, "screend")
    assert [row["stage"] for row in candidates(store, run)] == ["screening"]
