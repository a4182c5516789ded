"""The time left of running jobs as a window shows it.

A job's progress is read as the share of its expected running time it has spent, as the
command line reads it (core.jobs.queue.time_left_at): at a report of progress p after t
seconds of running, t (1 - p) / p is left. Measure and transfer jobs report progress so, from
what they measured of themselves (core.compile.phases), because their work is not their time:
a tune spends most of a small budget warming up, searching and building before its first
trial, and seconds after its last. Other handlers' share of their work stands in for it.

Between reports the time left counts down from what the last report said. A job still silent
when that has run out is late by an amount nothing measured: the time left then grows with
the silence, at the share still to do per share done ((1 - p) / p seconds for each second
since the report), so it never reaches 0 s while work remains. Below BASIS a job has no
estimate ("estimating..."). Running time only (a job's start is its current attempt's,
core.jobs.queue). What is shown is not smoothed: a report's estimate is the handler's, which
knows its phases, and holding it back made the window lag the command line (at half of an
8-trial tune, 1.7 times the real remainder where the report said 1.3)."""

from __future__ import annotations

from dataclasses import dataclass

from .queue import MIN_LEFT_S, RUNNING, Job, time_left_at


@dataclass
class _Report:
    """The last progress seen of one attempt: its level, and the running seconds it was first seen at."""

    started: float
    level: float
    at: float


def counted_down(at: float, level: float, ran: float) -> float | None:
    """Seconds left at `ran` running seconds after progress `level` was reported at `at`: what
    that report said, counted down since, or once the job is later than it said, the silence
    read as the pace of the rest; None while the report carries no estimate."""
    said = time_left_at(at, level)
    if said is None:
        return None
    silent = max(ran - at, 0.0)
    return max(said - silent, silent * (1 - level) / level, MIN_LEFT_S)


class Countdown:
    """The time left per job, for one watcher (a job monitor), which calls `left` for each job
    whenever it shows it: a progress level is taken as reported when the watcher first sees it
    (a refresh late at most)."""

    def __init__(self):
        self._reports: dict[int, _Report] = {}

    def left(self, job: Job, now: float) -> float | None:
        """Seconds left to show for `job` at time `now`; None while it has no estimate."""
        if job.state != RUNNING or job.started is None:
            self._reports.pop(job.id, None)
            return None
        ran, progress = max(now - job.started, 0.0), min(max(job.progress or 0.0, 0.0), 1.0)
        report = self._reports.get(job.id)
        if report is None or report.started != job.started or progress != report.level:  # a new attempt or report
            report = self._reports[job.id] = _Report(job.started, progress, ran)
        return counted_down(report.at, report.level, ran)
