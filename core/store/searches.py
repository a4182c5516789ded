"""Discovery runs in the store: a run is found again by the key of its settings (so running
the same search again resumes it), and every candidate's stage is kept as it moves on
(proposed, screening, screened out, training, stopped early, did not learn, diverged, too slow,
outside margin, testing, within margin (end-to-end timing off), tuning, tuned, failed), with the
reward the strategy was told, for resuming and counting. A run keeps the original network's
validation accuracy (its margin) and its test accuracy per seed (what a survivor's reported
accuracy is paired with); a survivor its test figures, FLOPs and tuned latency. The run's
references (core.search.references) are rows of the same table marked `reference`, which go
through testing and tuning as a survivor does (`tested` when timing is off); candidates() and
stage_counts() leave them out, references() lists them."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass

from .store import Store
from .stored_values import edited, numbers_only, stored_json

#: the stages a candidate can be in, in the order of the loop
STAGES = (
    "screening",
    "screened out",
    "training",
    "stopped early",
    "did not learn",
    "diverged",
    "too slow",
    "outside margin",
    "testing",
    "tested",  # a reference, tested, and no end-to-end timing asked for
    "within margin",  # kept, and no end-to-end timing asked for: not tuned
    "tuning",
    "tuned",
    "failed",
)
FINAL = (
    "screened out",
    "stopped early",
    "did not learn",
    "diverged",
    "too slow",
    "outside margin",
    "tested",
    "within margin",
    "tuned",
    "failed",
)
BETWEEN = ("screening", "training", "testing", "tuning")  # stages whose job runs, or is to run again
LIVE_JOB = ("queued", "running")  # core.jobs.queue's states of a job still to finish (the store knows no jobs)


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
    """Where a candidate (or a reference) of the run stands now; `fields`: job_id (the job of its
    stage), reward, accuracy, fisher_ratio, e2e_speedup, detail, selected_from (how many
    candidates the run had proposed when the margin let this one through), test_accuracy,
    test_accuracy_std, test_difference, test_difference_low, test_difference_high, test_flops
    and e2e_flops (JSON text), e2e_latency_ms, e2e_baseline_ms, timed_alone; reference, scale and
    deploy_scale for a reference (kept from earlier stages unless given)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}")
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


def stage_counts(store: Store, run: SearchRun) -> dict[str, int]:
    """How many candidates passed through each stage so far: proposed (all), screened (Fisher
    done), trained (training done), stopped early, within margin (of the validation accuracy),
    tested (on the test split over seeds), tuned (timed end to end), what failed; in flight
    (their job queued or running) and waiting between stages (for the original network's
    accuracy, or to go on when a stopped run resumes)."""
    rows = candidates(store, run)
    now = Counter(row["stage"] for row in rows)
    in_flight = sum(row["stage"] in BETWEEN and row["job_state"] in LIVE_JOB for row in rows)
    past_screening = sum(n for stage, n in now.items() if stage not in ("screening",))
    after_training = STAGES[STAGES.index("training") + 1 :]  # in the loop's order; failed is no training
    trained = sum(now[s] for s in after_training if s != "failed")
    return {
        "proposed": sum(now.values()),
        "screened": past_screening - now["failed"],
        "screened out": now["screened out"],
        "trained": trained,
        "stopped early": now["stopped early"],
        "did not learn": now["did not learn"],
        "diverged": now["diverged"],
        "too slow": now["too slow"],
        "within margin": now["testing"] + now["within margin"] + now["tuning"] + now["tuned"],
        "tested": sum(row["test_accuracy"] is not None for row in rows),
        "tuned": now["tuned"],
        "failed": now["failed"],
        "in flight": in_flight,
        "waiting": sum(now[s] for s in BETWEEN) - in_flight,
    }
