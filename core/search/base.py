"""The ask/tell interface every search strategy implements, plus budgets and de-duplication.

A strategy proposes candidates (`ask`), the driver evaluates them (FLOPs only,
Fisher Potential, or proxy training) and reports a score back (`tell`). Budgets
are relative to the operator being replaced (the template), measured at the
template's own bindings. Duplicates are never proposed twice: the canonical form's content
hash, computed once per candidate, is both the test and the candidate's key."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from core.errors import TesseraError

from ..analysis.cost import operator_cost
from ..analysis.shapes import concrete_shapes, infer_shapes
from ..analysis.summary import summarize
from ..data.conv_fit import ConvShape, layer_bindings
from ..data.errors import LayerMismatch
from ..ir.errors import BindingError
from ..ir.graph import OperatorGraph
from ..ir.serialize import content_hash, to_document


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
    """Remembers every operator seen by its content hash (core.ir.serialize: equal operators,
    whatever their names and bindings, hash alike)."""

    def __init__(self):
        self._keys: set[str] = set()

    def add(self, graph: OperatorGraph) -> str | None:
        """The operator's key if it is new (and remembers it); None if it was seen before."""
        key = content_hash(graph)
        if key in self._keys:
            return None
        self._keys.add(key)
        return key

    def __len__(self) -> int:
        return len(self._keys)


class Limits:
    """Absolute FLOPs/params caps from a relative Budget and the template's cost.

    Without `layers` an operator is measured at the template's own bindings. With them (the
    convolutions of a network the operator will replace, each shape with its count; from
    core.data.swap_convs.searched_layers) it is measured network-wide, as Canvas solves: valid at
    every layer's sizes, and costed as the sum over the layers, against the template's sum."""

    def __init__(self, template: OperatorGraph, budget: Budget, layers: Mapping[ConvShape, int] | None = None):
        s = summarize(template)
        if not s.ok or s.numeric_cost is None:
            raise SearchError(
                f"template {template.name or '?'} must be valid and fully bound "
                f"(bindings in the file): {'; '.join(s.messages()) or 'unbound variables'}"
            )
        self.bindings = dict(s.bindings)
        self.layers = dict(layers or {})
        try:  # the sizes an operator must be whole at: every layer's, or the template's own
            self.sizes = [layer_bindings(template, layer) for layer in self.layers] or [self.bindings]
        except LayerMismatch as e:
            raise SearchError(f"template {template.name or '?'} cannot stand in for a convolution: {e}") from None
        reference = self.measure(template)
        if reference is None:
            raise SearchError(f"template {template.name or '?'} cannot be built at every searched layer")
        self.reference_flops, self.reference_params = reference
        self.max_flops = None if budget.flops is None else budget.flops * self.reference_flops
        self.max_params = None if budget.params is None else budget.params * self.reference_params

    def measure(self, graph: OperatorGraph) -> tuple[int, int] | None:
        """(flops, params) at the template's bindings (plus the graph's own, e.g. a global G),
        or summed over the layers; None if the graph is invalid there (at any layer)."""
        if not self.layers:
            s = summarize(graph, {**self.bindings, **graph.bindings})
            if not s.ok or not s.shapes.solved or s.numeric_cost is None:
                return None
            return s.numeric_cost["flops"], s.numeric_cost["params"]
        report = infer_shapes(graph)
        if not report.ok or report.constraints:
            return None
        cost = operator_cost(graph, report)
        flops = params = 0
        for layer, count in self.layers.items():
            try:
                bindings = layer_bindings(graph, layer)
                numbers = cost.numeric(bindings, concrete_shapes(graph, report, bindings))
            except (LayerMismatch, BindingError):
                return None
            flops += count * numbers["flops"]
            params += count * numbers["params"]
        return flops, params

    def within(self, flops: int, params: int) -> bool:
        return (self.max_flops is None or flops <= self.max_flops) and (
            self.max_params is None or params <= self.max_params
        )


class Strategy(ABC):
    """ask(n) proposes up to n new, valid, in-budget candidates; tell(key, score) feeds back."""

    name: str = "strategy"
    #: whether candidates are judged at every searched layer of the network (Limits' layers):
    #: true for strategies whose operators are size expressions, not one layer's numbers
    network_wide: ClassVar[bool] = False

    def __init__(
        self,
        template: OperatorGraph,
        budget: Budget = Budget(),
        seed: int = 0,
        layers: Mapping[ConvShape, int] | None = None,
    ):
        self.template = template
        self.budget = budget
        self.limits = Limits(template, budget, layers if self.network_wide else None)
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
        key = self.seen.add(graph)
        if key is None:
            self.stats["duplicate"] += 1
            return None
        self.stats["proposed"] += 1
        graph.bindings = {**self.limits.bindings, **graph.bindings}  # the hash reads no bindings
        return Candidate(graph, self.origin, key, cost[0], cost[1], dict(info or {}))
