"""The search side's job kind: "search" runs a search (core.search.driver) in a worker and
writes its candidates to the store as it goes (its result only counts them), so it stays in
local workers."""

from __future__ import annotations

from ..jobs.registry import JobKind
from .payloads import SearchPayload
from .results import SearchResult

SEARCH = JobKind("search", "core.search.driver:search_job", SearchPayload, SearchResult, None, SearchResult.line)
