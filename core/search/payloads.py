"""The payload of the search side's job kind, "search": a search's settings, checked by
core.search.driver.SearchConfig when it starts. Importing this declares no job kind."""

from __future__ import annotations

from dataclasses import dataclass

from ..jobs.contract import Payload


@dataclass(frozen=True)
class SearchPayload(Payload):
    kind = "search"
    config: dict  # core.search.driver.SearchConfig's fields
