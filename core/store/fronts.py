"""What the operator gallery and the Pareto picture read of the results, for a pair of
objectives (two of RESULT_OBJECTIVES, checked, since they become column names in SQL): how
many results have both, every such point with its origin, and the operators on their Pareto
front (those whose timing is in doubt left off where a timed objective ranks them, and
counted). A damaged store is read around its damage (Store.readable)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import StoreError
from .pareto import pareto_front, reliable
from .store import RESULT_OBJECTIVES, Store

Pair = tuple[str, str]


def both_counts(store: Store, pairs: Sequence[Pair]) -> dict[Pair, int]:
    """How many results have both values of each pair (one pass over the results)."""
    sums = ", ".join(f"SUM({_both(x, y)})" for x, y in pairs)
    row = store.readable.execute(f"SELECT {sums} FROM results").fetchone()
    return {pair: int(n or 0) for pair, n in zip(pairs, row)}


def origins(store: Store) -> list[str]:
    """The origins of the results ('hand-made', 'search:mcts', ...), sorted."""
    rows = store.readable.execute("SELECT DISTINCT origin FROM results WHERE origin IS NOT NULL ORDER BY origin")
    return [r[0] for r in rows]


def doubtful(store: Store, x: str, y: str, origin: str | None = None) -> int:
    """How many results with both values are left off the front of (x, y) for a timing in doubt."""
    ranked = reliable((x, y))
    if not ranked:
        return 0
    where = f"{_both(x, y)} AND NOT ({ranked})" + (" AND origin = ?" if origin is not None else "")
    (count,) = store.readable.execute(
        f"SELECT COUNT(*) FROM results WHERE {where}", [origin] if origin else []
    ).fetchone()
    return count


def points(store: Store, x: str, y: str) -> list[tuple[str | None, float, float]]:
    """(origin, x, y) of every result that has both values."""
    rows = store.readable.execute(f"SELECT origin, {x}, {y} FROM results WHERE {_both(x, y)}")
    return [tuple(r) for r in rows]


def operator_front(store: Store, x: str, y: str, origin: str | None = None, with_doubtful: bool = False) -> list[dict]:
    """The results rows on the Pareto front of (x, y) among those of `origin` (all when None),
    best x first, one per operator (its best there by x). Where x or y is timed, results whose
    timing is in doubt stand on it only `with_doubtful` (core.store.pareto)."""
    ranked = "" if with_doubtful else reliable((x, y))
    where = " AND ".join(filter(None, (_both(x, y), ranked, "origin = ?" if origin is not None else "")))
    rows = list(store.results(where, [origin] if origin is not None else [], order_by="result_key"))
    if not rows:
        return []
    values = np.array([[r[x], r[y]] for r in rows], dtype=float)
    front = pareto_front(values, [RESULT_OBJECTIVES[x], RESULT_OBJECTIVES[y]])
    front = front[np.argsort(values[front, 0] * (1 if RESULT_OBJECTIVES[x] == "min" else -1), kind="stable")]
    chosen: dict[int, dict] = {}
    for i in front:
        chosen.setdefault(rows[i]["operator_id"], rows[i])
    return list(chosen.values())


def _both(x: str, y: str) -> str:
    unknown = [c for c in (x, y) if c not in RESULT_OBJECTIVES]
    if unknown:
        raise StoreError(f"unknown objective {', '.join(unknown)}; objectives: {', '.join(RESULT_OBJECTIVES)}")
    return f"{x} IS NOT NULL AND {y} IS NOT NULL"
