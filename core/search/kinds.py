"""The search side's job kind: "search" runs a search (core.search.driver) in a worker and
writes its candidates to the store as it goes, so it stays in local workers."""

from __future__ import annotations

from dataclasses import dataclass

from ..jobs.contract import Payload
from ..jobs.registry import JobKind, declare


@dataclass(frozen=True)
class SearchPayload(Payload):
    kind = "search"
    config: dict  # core.search.driver.SearchConfig's fields, checked when the search starts


SEARCH = declare(JobKind("search", "core.search.driver:search_job", SearchPayload))
