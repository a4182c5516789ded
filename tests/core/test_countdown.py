"""The time left a window shows for a job: from its rate since its start-up (the longest stall
of its progress), "estimating..." (None) until there is one; running time only, never 0 s while
work remains, moving gently when the estimate jumps."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.jobs.countdown import Countdown
from core.jobs.queue import DONE


def _shown(countdown, job, samples):
    """What `countdown` shows for `job` at each (running seconds, progress) sample."""
    return [countdown.left(replace(job, progress=progress), job.started + ran) for ran, progress in samples]


def test_the_start_up_does_not_count_in_the_rate(queue, conv2d):
    """A tune as it went on a loaded machine: its setup (1% to 5% in 0.05 s), 5% for 37 s
    (warm-up, search, build), then a trial measured every 0.2 s. No estimate until two trials
    followed the first; then the trials' rate."""
    queue.submit("measure", {"operator": conv2d, "tune_trials": 8})
    job = queue.claim(["measure"])
    trial = 0.75 / 8  # a trial's share of the job
    start_up = [(4.89, 0.01), (4.94, 0.05), (10.6, 0.05), (17.9, 0.05), (41.7, 0.05)]
    trials = [(41.9 + 0.2 * k, 0.05 + trial * (k + 1)) for k in range(4)]
    shown = _shown(Countdown(), job, start_up + trials)
    assert shown[: len(start_up) + 2] == [None] * (len(start_up) + 2)  # estimating...
    # 4 of 8 trials in: 3 trials took 0.6 s, and 57.5% of the job is left: 0.6 * 0.575 / (3 * trial)
    assert shown[-1] == pytest.approx(0.6 * 0.575 / (3 * trial))  # not the 57 s the start-up's pace says


def test_the_time_left_is_never_zero_while_work_remains(queue, conv2d):
    queue.submit("measure", {"operator": conv2d})
    job = queue.claim(["measure"])
    countdown = Countdown()
    _shown(countdown, job, [(20, 0.1), (25, 0.3), (30, 0.54)])  # a start-up of 20 s
    stalled = _shown(countdown, job, [(30 + seconds, 0.54) for seconds in range(1, 40)])  # it stalls at 54%
    assert min(stalled) >= 8  # 44% took 10 s: never counted down to 0 s
    assert stalled[-1] > stalled[20]  # the longer the stall, the slower the rate: more time left
    assert _shown(countdown, job, [(75, 0.54)]) == [None]  # stalled for over twice the start-up: estimating
    assert countdown.left(replace(job, state=DONE), job.started + 200) is None


def test_a_kind_seen_to_the_end_tells_what_follows_the_rate_s_work(queue, conv2d):
    """A tune's trials go at 0.2 s each, then its check and timing take 3 s more. Once the
    watcher saw one to the end, the next at 4 of 8 trials has those 3 s still to come."""
    first, second = (queue.submit("measure", {"operator": conv2d, "tune_trials": 8}) for _ in range(2))
    countdown, trial = Countdown(), 0.75 / 8
    samples = [(1.0, 0.01), (30.0, 0.05)] + [(30.2 + 0.2 * k, 0.05 + trial * (k + 1)) for k in range(8)]
    job = queue.claim(["measure"])
    _shown(countdown, job, samples)
    countdown.left(replace(job, state=DONE, progress=1.0, finished=job.started + 34.6), job.started + 35)
    job = replace(queue.claim(["measure"]), id=second)
    halfway = _shown(countdown, job, samples[:6])[-1]
    assert halfway == pytest.approx(34.6 - 30.8)  # as the first had left there, not the rate's 0.8 s
    assert first != second


def test_the_time_left_shown_moves_gently_when_the_estimate_jumps(queue, conv2d):
    """After the start-up, a tune's rate changes with its batches: the estimate jumps (40 s to
    about 10 s within 10 s); what is shown heads for it, within 0.7 to 1.3 times it."""
    queue.submit("measure", {"operator": conv2d})
    job = queue.claim(["measure"])
    countdown = Countdown()
    _shown(countdown, job, [(60, 0.2), (65, 0.3)])  # the start-up is over
    shown = _shown(countdown, job, [(70, 0.4), (75, 0.8)])
    assert shown[0] == pytest.approx(30.0)  # 20% in 10 s, 60% left
    fresh = 15 * 0.2 / 0.6  # 60% in 15 s, 20% left: 5 s
    assert shown[1] == pytest.approx(1.3 * fresh)  # not 5 s at once: as high as 1.3 times it allows


def test_a_new_attempt_starts_its_rate_from_zero(queue, conv2d):
    queue.submit("measure", {"operator": conv2d})
    job = queue.claim(["measure"])
    countdown = Countdown()
    assert _shown(countdown, job, [(10, 0.2), (15, 0.4), (20, 0.6)])[-1] == pytest.approx(10.0)
    again = replace(job, started=job.started + 100)  # taken up again by another worker
    assert _shown(countdown, again, [(5, 0.0), (30, 0.1)]) == [None, None]  # estimating anew
