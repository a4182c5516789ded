"""The ask/tell interface every search strategy implements, plus budgets and de-duplication.

A strategy proposes candidates (`ask`), the driver evaluates them (FLOPs only,
Fisher Potential, or proxy training) and reports a score back (`tell`). Budgets
are relative to the operator being replaced (the template), measured at the
template's own bindings. Duplicates are never proposed twice: a Weisfeiler-Lehman
hash screens quickly and the canonical form decides."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from ..analysis.summary import summarize
from ..ir.errors import TesseraError
from ..ir.graph import OperatorGraph
from ..ir.serialize import canonical_json, content_hash, to_document, wl_hash


class SearchError(TesseraError):
    """A search cannot start (bad template, budget) or cannot continue."""


@dataclass(frozen=True)
class Budget:
    """Caps relative to the template: flops=0.5 allows half the template's FLOPs."""

    flops: float | None = 1.0
    params: float | None = None
    max_primitives: int = 8


@dataclass
class Candidate:
    graph: OperatorGraph
    origin: str
    key: str  # content hash of the canonical form
    flops: int  # at the template's bindings
    params: int
    info: dict = field(default_factory=dict)

    @property
    def document(self) -> dict:
        return to_document(self.graph)


class Deduplicator:
    """Remembers every operator seen: WL hash first (cheap), canonical JSON to confirm."""

    def __init__(self):
        self._by_wl: dict[str, set[str]] = {}

    def add(self, graph: OperatorGraph) -> bool:
        """True if the operator is new (and remembers it)."""
        canon = canonical_json(graph)
        seen = self._by_wl.setdefault(wl_hash(graph), set())
        if canon in seen:
            return False
        seen.add(canon)
        return True

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_wl.values())


class Limits:
    """Absolute FLOPs/params caps from a relative Budget and the template's cost."""

    def __init__(self, template: OperatorGraph, budget: Budget):
        s = summarize(template)
        if not s.ok or s.numeric_cost is None:
            raise SearchError(
                f"template {template.name or '?'} must be valid and fully bound "
                f"(bindings in the file): {'; '.join(s.messages()) or 'unbound variables'}"
            )
        self.bindings = dict(s.bindings)
        self.reference_flops = s.numeric_cost["flops"]
        self.reference_params = s.numeric_cost["params"]
        self.max_flops = None if budget.flops is None else budget.flops * self.reference_flops
        self.max_params = None if budget.params is None else budget.params * self.reference_params

    def measure(self, graph: OperatorGraph) -> tuple[int, int] | None:
        """(flops, params) at the template's bindings (plus the graph's own, e.g. a global G),
        or None if the graph is invalid there."""
        s = summarize(graph, {**self.bindings, **graph.bindings})
        if not s.ok or not s.shapes.solved or s.numeric_cost is None:
            return None
        return s.numeric_cost["flops"], s.numeric_cost["params"]

    def within(self, flops: int, params: int) -> bool:
        return (self.max_flops is None or flops <= self.max_flops) and (
            self.max_params is None or params <= self.max_params
        )


class Strategy(ABC):
    """ask(n) proposes up to n new, valid, in-budget candidates; tell(key, score) feeds back."""

    name: str = "strategy"

    def __init__(self, template: OperatorGraph, budget: Budget = Budget(), seed: int = 0):
        self.template = template
        self.budget = budget
        self.limits = Limits(template, budget)
        self.rng = random.Random(seed)
        self.seen = Deduplicator()
        self.stats = {"tried": 0, "invalid": 0, "over_budget": 0, "duplicate": 0, "proposed": 0}

    @property
    def origin(self) -> str:
        return f"search:{self.name}"

    @abstractmethod
    def ask(self, n: int = 1) -> list[Candidate]: ...

    def tell(self, key: str, score: float) -> None:  # noqa: B027 (a hook: samplers keep this no-op)
        """Strategies that learn (MCTS) override this; samplers ignore scores."""

    def admit(self, graph: OperatorGraph, info: dict | None = None) -> Candidate | None:
        """Common screening: valid at the template's bindings, within budget, not seen before."""
        self.stats["tried"] += 1
        cost = self.limits.measure(graph)
        if cost is None:
            self.stats["invalid"] += 1
            return None
        if not self.limits.within(*cost):
            self.stats["over_budget"] += 1
            return None
        if not self.seen.add(graph):
            self.stats["duplicate"] += 1
            return None
        self.stats["proposed"] += 1
        graph.bindings = {**self.limits.bindings, **graph.bindings}
        return Candidate(graph, self.origin, content_hash(graph), cost[0], cost[1], dict(info or {}))
