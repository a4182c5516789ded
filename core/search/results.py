"""The result of the search side's job kind, "search" (core.search.driver.run_search): how
many candidates were found, scored and queued for measurement, what could not be scored and
the strategy's own statistics. The candidates themselves are in the store already. Importing
this declares no job kind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..jobs.contract import Result


@dataclass(frozen=True)
class SearchResult(Result):
    kind = "search"
    found: int  # candidates proposed and saved
    scored: int  # of them, evaluated (Fisher Potential or proxy training)
    queued: int  # measurement jobs queued
    failures: tuple[str, ...]  # the first candidates that could not be scored or measured, and why
    seconds: float
    stats: dict[str, Any]  # the strategy's statistics (core.search.base.Strategy.stats)

    def line(self) -> str:
        """The job monitor's line for it."""
        return tally(self.found, self.scored, self.queued)


def tally(found: int, scored: int, queued: int) -> str:
    """'12 candidates, 12 scored, 0 queued': a search's progress, and its result's line."""
    return f"{found} candidates, {scored} scored, {queued} queued"
