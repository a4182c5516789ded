"""Discovery runs in the store: a run is found again by the key of its settings (so running
the same search again resumes it), and every candidate's stage is kept as it moves on (a Stage,
defined here so that an unknown one is refused; core.search.stages counts them), with the
reward the strategy was told, for resuming and counting. A run keeps the original network's
validation accuracy (its margin) and its test accuracy per seed (what a survivor's reported
accuracy is paired with); a survivor its test figures, FLOPs and tuned latency. The run's
references (core.search.references) are rows of the same table marked `reference`, which go
through testing and tuning as a survivor does; candidates() leaves them out, references()
lists them."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from enum import StrEnum

from .store import Store
from .stored_values import edited, numbers_only, stored_json


class Stage(StrEnum):
    """A candidate's stage, in the loop's order. Between stages a job runs (SCREENING,
    TRAINING, TESTING, TUNING; or is to run again when a stopped run resumes); WAITING_* wait
    for the original network's figures or for the run to have nothing else in flight; the rest
    are final."""

    SCREENING = "screening"
    SCREENED_OUT = "screened out"
    TRAINING = "training"
    STOPPED_EARLY = "stopped early"
    DID_NOT_LEARN = "did not learn"
    DIVERGED = "diverged"
    TOO_SLOW = "too slow"
    WAITING_FOR_ORIGINAL = "waiting for the original"  # trained before the original's validation accuracy was known
    OUTSIDE_MARGIN = "outside margin"  # shown worse than the original on validation
    TESTING = "testing"
    WAITING_FOR_TEST = "waiting for the original's test"  # to be tested once the original is
    WORSE = "worse on test"  # shown worse than the original by the test verdict
    UNDECIDED = "undecided on test"  # its test interval reaches across the margin: neither shown
    TESTED = "tested"  # a reference, tested, and no end-to-end timing asked for
    WITHIN_MARGIN = "within margin"  # a survivor, and no end-to-end timing asked for: not tuned
    TUNING = "tuning"
    WAITING_ALONE = "waiting to be timed alone"  # a reference, tested: tuned once the run has nothing else in flight
    TUNED = "tuned"
    FAILED = "failed"


@dataclass(frozen=True)
class SearchRun:
    id: int
    key: str
    name: str
    config: dict
    baseline_accuracy: float | None
    baseline_job_id: int | None
    baseline_test: tuple[float | None, ...] | None = None  # the original's test accuracy per report seed
    baseline_test_job_id: int | None = None


def open_run(store: Store, key: str, name: str, config: dict) -> SearchRun:
    """The run with this key, created (with its settings) if new."""
    with store.write():
        row = next(store.db.table("searches").rows_where("key = ?", [key]), None)
        if row is None:
            store.db.table("searches").insert(
                {"key": key, "name": name, "config": json.dumps(config), "created": time.time()}
            )
            row = next(store.db.table("searches").rows_where("key = ?", [key]))
    return _run(row)


def find_run(store: Store, key: str) -> SearchRun | None:
    """The run with this key, if the store has one (so a new start would resume it)."""
    row = next(store.db.table("searches").rows_where("key = ?", [key]), None)
    return None if row is None else _run(row)


def runs(store: Store) -> list[SearchRun]:
    """Every run in the store, oldest first."""
    return [_run(row) for row in store.db.table("searches").rows_where(order_by="id")]


def set_baseline(store: Store, run: SearchRun, accuracy: float | None = None, job_id: int | None = None) -> SearchRun:
    """Record the original network's accuracy, or the job that trains it."""
    with store.write():
        store.db.table("searches").update(run.id, {"baseline_accuracy": accuracy, "baseline_job_id": job_id})
    return _run(store.db.table("searches").get(run.id))


def set_baseline_test(
    store: Store, run: SearchRun, accuracies: list[float | None] | None = None, job_id: int | None = None
) -> SearchRun:
    """Record the original network's test accuracy per seed, or the job that measures it."""
    text = None if accuracies is None else json.dumps(accuracies)
    with store.write():
        store.db.table("searches").update(run.id, {"baseline_test": text, "baseline_test_job_id": job_id})
    return _run(store.db.table("searches").get(run.id))


def _run(row: dict) -> SearchRun:
    row = numbers_only(row, ("baseline_accuracy",))
    test = row["baseline_test"]
    return SearchRun(
        row["id"],
        row["key"],
        row["name"],
        stored_json(row["config"], "searches", row["id"], "config"),
        row["baseline_accuracy"],
        row["baseline_job_id"],
        None if test is None else _accuracies(stored_json(test, "searches", row["id"], "baseline_test"), row["id"]),
        row["baseline_test_job_id"],
    )


def _accuracies(values, run_id: int) -> tuple[float | None, ...]:
    """The original's test accuracy per seed as stored: a list of numbers (None: a seed not
    trained); StoreError for anything else, which only an edit outside Tessera leaves."""
    if not isinstance(values, list) or any(v is not None and not isinstance(v, (int, float)) for v in values):
        raise edited("searches", run_id, "baseline_test", f"no list of accuracies ({str(values)[:60]})")
    return tuple(values)


def set_stage(store: Store, run: SearchRun, operator_id: int, stage: str, **fields) -> None:
    """Where a candidate (or a reference) of the run stands now (`stage`: a Stage, or its
    value; ValueError for any other); `fields`: job_id (the job of its
    stage), reward, accuracy, fisher_ratio, e2e_speedup, detail, selected_from (how many
    candidates the run had proposed when the margin let this one through), test_accuracy,
    test_accuracy_std, test_difference, test_difference_low, test_difference_high, test_flops
    and e2e_flops (JSON text), e2e_latency_ms, e2e_baseline_ms, timed_alone; reference, scale and
    deploy_scale for a reference (kept from earlier stages unless given)."""
    if stage not in set(Stage):
        known = ", ".join(Stage)
        raise ValueError(f"unknown stage {stage!r} of a discovery candidate: one of {known}")
    table = store.db.table("search_candidates")
    with store.write():
        row = next(table.rows_where("search_id = ? AND operator_id = ?", [run.id, operator_id]), None)
        values = {"stage": stage, "updated": time.time(), **fields}
        if row is None:
            table.insert({"search_id": run.id, "operator_id": operator_id, **values})
        else:
            table.update(row["id"], values)


def candidates(store: Store, run: SearchRun) -> list[dict]:
    """The run's candidates, oldest first, each with its operator's name and hash and the
    state of its stage's job (None when it has none)."""
    return _rows(store, run, "c.reference IS NULL")


def references(store: Store, run: SearchRun) -> list[dict]:
    """The run's references, oldest first, as candidates() gives its candidates."""
    return _rows(store, run, "c.reference IS NOT NULL")


def row_of(store: Store, run: SearchRun, operator_id: int) -> dict | None:
    """The run's row of an operator (a candidate or a reference), or None."""
    return next(iter(_rows(store, run, "c.operator_id = ?", [operator_id])), None)


def _rows(store: Store, run: SearchRun, which: str, args: list | None = None) -> list[dict]:
    numeric = [name for name, kind in store.db["search_candidates"].columns_dict.items() if kind in (int, float)]
    return [
        numbers_only(row, numeric)
        for row in store.db.query(
            "SELECT c.*, o.name AS operator_name, o.hash AS operator_hash, j.state AS job_state "
            "FROM search_candidates AS c JOIN operators AS o ON o.id = c.operator_id "
            f"LEFT JOIN jobs AS j ON j.id = c.job_id WHERE c.search_id = ? AND {which} ORDER BY c.id",
            [run.id, *(args or [])],
        )
    ]
