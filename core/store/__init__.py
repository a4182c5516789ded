"""The results store (SQLite via sqlite-utils): operators, sequences, devices, jobs,
measurements, trials and scores in one file, with schema migrations and Pareto fronts."""

from .errors import InvalidResult, StoreDamaged, StoreError, StoreFull, StoreMissing, StoreReadOnly
from .location import default_store_path
from .pareto import MAXIMIZE, MINIMIZE, pareto_front
from .store import RESULT_OBJECTIVES, Store

__all__ = [
    "MAXIMIZE",
    "MINIMIZE",
    "RESULT_OBJECTIVES",
    "InvalidResult",
    "Store",
    "StoreDamaged",
    "StoreError",
    "StoreFull",
    "StoreMissing",
    "StoreReadOnly",
    "default_store_path",
    "pareto_front",
]
