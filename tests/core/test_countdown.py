"""The time left a window shows for a job: its progress read as the share of its expected
running time spent (as measure jobs report it, core.compile.phases), counted down between
reports, "estimating..." (None) until there is an estimate; running time only, never 0 s while
work remains."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.jobs.countdown import Countdown
from core.jobs.queue import DONE


def _shown(countdown, job, samples):
    """What `countdown` shows for `job` at each (running seconds, progress) sample."""
    return [countdown.left(replace(job, progress=progress), job.started + ran) for ran, progress in samples]


def test_a_share_of_the_expected_time_reads_as_the_time_left(queue, conv2d):
    """A tune as it went on a loaded machine: its setup, then 37 s of warm-up, search and build
    with nothing to estimate from (progress stays at its start), then each trial reported as
    the share of the expected time spent: 4 s left after the first, at 41.9 s. The window
    says "estimating..." through the start-up, then what the handler expected, counted down;
    at a report it reads what the command line reads."""
    queue.submit("measure", {"operator": conv2d, "tune_trials": 8})
    job = queue.claim(["measure"])
    start_up = [(4.89, 0.01), (4.94, 0.01), (10.6, 0.01), (17.9, 0.01), (41.7, 0.01)]
    trials = [(41.9 + 0.2 * k, (41.9 + 0.2 * k) / (41.9 + 4.0)) for k in range(4)]  # 4 s left, each on time
    countdown = Countdown()
    shown = _shown(countdown, job, start_up + trials)
    assert shown[: len(start_up)] == [None] * len(start_up)  # estimating...
    assert shown[len(start_up) :] == pytest.approx([4.0 - 0.2 * k for k in range(4)])
    ran, progress = trials[-1]
    assert replace(job, progress=progress).time_left(job.started + ran) == pytest.approx(shown[-1])
    between = _shown(countdown, job, [(ran + 1.5, progress)])  # no report for 1.5 s: counted down
    assert between == pytest.approx([shown[-1] - 1.5])


def test_the_time_left_is_never_zero_while_work_remains(queue, conv2d):
    queue.submit("measure", {"operator": conv2d})
    job = queue.claim(["measure"])
    countdown = Countdown()
    _shown(countdown, job, [(20, 0.1), (25, 0.3), (30, 0.54)])  # at 54% after 30 s: 25.6 s left
    stalled = _shown(countdown, job, [(30 + seconds, 0.54) for seconds in range(1, 40)])  # no report for 39 s
    assert min(stalled) >= 8  # it counts down, but a job late by more than its estimate is not nearly done
    assert stalled[-1] > stalled[20]  # the longer the silence past the estimate, the more time left
    assert countdown.left(replace(job, state=DONE), job.started + 200) is None


def test_a_new_attempt_reads_its_own_time(queue, conv2d):
    queue.submit("measure", {"operator": conv2d})
    job = queue.claim(["measure"])
    countdown = Countdown()
    assert _shown(countdown, job, [(10, 0.2), (15, 0.4), (20, 0.6)])[-1] == pytest.approx(20 * 0.4 / 0.6)
    again = replace(job, started=job.started + 100)  # taken up again by another worker
    assert _shown(countdown, again, [(5, 0.0), (30, 0.1)]) == [None, pytest.approx(270.0)]  # estimating, then its own


def test_a_search_reports_the_share_of_its_expected_time(monkeypatch):
    """core.compile.phases: a tune of 64 trials in batches of 32, its trials 0.2 s apart after
    a 10 s search and build, one trial stalled 19 s; what follows the search, 2 s. Progress
    says nothing until the first trial, then the time left that the trials' median pace, the
    next batch's search and build, and what follows make, read back as t (1 - p) / p."""
    from types import SimpleNamespace

    from core.compile import phases
    from core.compile.settings import Settings
    from core.jobs.queue import time_left_at

    clock = SimpleNamespace(now=100.0)
    monkeypatch.setattr(phases, "time", SimpleNamespace(time=lambda: clock.now, monotonic=lambda: clock.now))
    monkeypatch.setattr(phases, "busy_slowdown", lambda: 1.0)
    reported = []
    expected = phases.Expected(Settings(tune_trials=64), lambda f, m: reported.append(f), started=100.0)
    search = expected.tuning(32 / 64, lambda: 2.0)

    def at(seconds: float, done: int) -> float | None:
        clock.now = 100.0 + seconds
        search(done / 64, "")
        return time_left_at(seconds, reported[-1])

    assert [at(1, 0), at(10, 0)] == [None, None]  # searched and built: nothing measured yet
    assert at(10.2, 1) == pytest.approx(63 * 0.2 + 10 + 2)  # 63 trials, the next batch's 10 s, 2 s after
    at(10.4, 2)
    assert at(29.4, 3) == pytest.approx(61 * 0.2 + 10 + 2, rel=0.01)  # a trial of 19 s: not the pace of the rest


def test_the_rounds_expected_include_choosing_each_sides_threads():
    """core.compile.phases.rounds_s: where each side first chooses between thread counts (two
    free cores: one or two), that choice's calibration and fewest rounds, each a quarter of
    min_repeat_ms per count, are added; with nothing to choose, nothing."""
    from core.compile.phases import rounds_s
    from core.compile.rounds import FEWEST_ROUNDS
    from core.compile.settings import Settings

    settings = Settings(min_repeat_ms=100.0)
    choice = 2 * 2 * (2 + FEWEST_ROUNDS) * 0.25 * 0.1  # 2 sides x 2 counts x (calibration + rounds) x 25 ms
    assert rounds_s(settings, 2, counts=2) - rounds_s(settings, 2) == pytest.approx(choice)
    assert rounds_s(settings, 2, counts=1) == rounds_s(settings, 2)
