"""The discovery loop's state, as values: where each candidate (or reference) of a run stands
(Stage, kept in the store's `search_candidates.stage` and defined beside it, in
core.store.searches, so the store refuses a stage that is none of them), where the run itself
is (Phase), and the counts the report and the window show (stage_counts). Nothing here reads a
sentence to know a state: the `detail` a row keeps is for people only."""

from __future__ import annotations

from collections import Counter
from enum import StrEnum

from ..jobs.queue import QUEUED, RUNNING
from ..store.searches import Stage

#: stages whose job runs, or is to run again when a stopped run resumes
BETWEEN = frozenset({Stage.SCREENING, Stage.TRAINING, Stage.TESTING, Stage.TUNING})
#: stages that wait for something besides their own job
WAITING = frozenset({Stage.WAITING_FOR_ORIGINAL, Stage.WAITING_FOR_TEST, Stage.WAITING_ALONE})
FINAL = frozenset(Stage) - BETWEEN - WAITING
#: stages that ended with a proxy accuracy (trained in full, or stopped with one)
TRAINED = frozenset(
    {Stage.STOPPED_EARLY, Stage.DID_NOT_LEARN, Stage.DIVERGED, Stage.TOO_SLOW, Stage.WAITING_FOR_ORIGINAL}
    | {Stage.OUTSIDE_MARGIN, Stage.TESTING, Stage.WAITING_FOR_TEST, Stage.WORSE, Stage.UNDECIDED}
    | {Stage.WITHIN_MARGIN, Stage.TUNING, Stage.TUNED}
)
#: past the validation margin: to be tested, tested, or (untested runs) kept
PAST_MARGIN = frozenset(
    {Stage.TESTING, Stage.WAITING_FOR_TEST, Stage.WORSE, Stage.UNDECIDED, Stage.WITHIN_MARGIN, Stage.TUNING}
    | {Stage.TUNED}
)
LIVE_JOB = (QUEUED, RUNNING)  # a stage's job still to finish


class Phase(StrEnum):
    """Where a run is: what its progress line and the window say."""

    ORIGINAL = "training the original network"  # its figures are not known yet: the budget's clock waits
    PROPOSING = "proposing"
    FINISHING = "finishing the candidates in flight"  # its time or candidates are spent
    TIMING_ALONE = "timing survivors and references alone"
    FINISHED = "finished"
    STOPPED = "stopped"  # by the user; the same settings resume it


def stage_counts(rows: list[dict]) -> dict[str, int]:
    """How many of a run's candidates (core.store.searches.candidates' rows) passed through
    each stage so far: proposed (all), screened (Fisher done), trained, stopped early, within
    margin (not shown worse on validation), tested (on the test split over seeds) and of them
    within, worse and undecided, tuned (timed end to end), what failed; in flight (their job
    queued or running) and waiting (for the original's figures, or to go on when a stopped run
    resumes)."""
    now = Counter(Stage(row["stage"]) for row in rows)
    in_flight = sum(row["stage"] in BETWEEN and row["job_state"] in LIVE_JOB for row in rows)
    tested = [row for row in rows if row["test_accuracy"] is not None]
    return {
        "proposed": len(rows),
        "screened": len(rows) - now[Stage.SCREENING] - now[Stage.FAILED],
        "screened out": now[Stage.SCREENED_OUT],
        "trained": sum(now[s] for s in TRAINED),
        "stopped early": now[Stage.STOPPED_EARLY],
        "did not learn": now[Stage.DID_NOT_LEARN],
        "diverged": now[Stage.DIVERGED],
        "too slow": now[Stage.TOO_SLOW],
        "within margin": sum(now[s] for s in PAST_MARGIN),
        "tested": len(tested),
        "within on test": len(tested) - now[Stage.WORSE] - now[Stage.UNDECIDED],
        "worse on test": now[Stage.WORSE],
        "undecided": now[Stage.UNDECIDED],
        "tuned": now[Stage.TUNED],
        "failed": now[Stage.FAILED],
        "in flight": in_flight,
        "waiting": sum(now[s] for s in BETWEEN | WAITING) - in_flight,
    }
