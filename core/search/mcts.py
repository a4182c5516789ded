"""Syno-style search: Monte-Carlo tree search over partial bottom-up chains.

Nodes are partial chains (a frontier and the steps taken); actions are the
Synthesizer's bottom-up primitives, filtered by the canonicalization rules and
pruned by shape distance against the remaining primitive budget. A rollout
finishes a chain at random; the complete operator is proposed through `ask`
and its score (accuracy, Fisher Potential or any reward) comes back through
`tell`, which backs it up the tree. FLOPs are a hard cap (Strategy.admit)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..ir.graph import OperatorGraph
from ..ir.serialize import content_hash
from ..ir.symbolic import VarKind
from ..ir.tensor import TensorType
from .base import Budget, Candidate, Strategy
from .canonical import chain_violation, violation
from .chain import Action, Step, Synthesizer, chain_graph
from .distance import shape_distance

LOG_SPAN = 1e3  # positive scores spanning more than this ratio are compared by their logarithm

EXPLORATION = 0.7
WIDENING = 1.5
#: small sizes the synthesis may introduce beyond the template's own (Syno's s)
COEFFICIENTS = {"K": 3, "s": 2}


def scaled_reward(low: float, high: float, score: float) -> float:
    """A score of any scale (accuracy, Fisher Potential) as a UCT reward in [0, 1], scaled
    between the lowest and highest scores seen so far. Positive scores spanning more than
    three orders of magnitude (Fisher Potentials do) are scaled by their logarithm, so one
    score a thousand times the others does not squash the rest towards 0. Not finite: 0."""
    if not math.isfinite(score):
        return 0.0
    if not high > low:
        return 0.5
    if low > 0 and high / low > LOG_SPAN:
        score, low, high = math.log(score), math.log(low), math.log(high)
    return (score - low) / (high - low)


@dataclass(eq=False)
class Node:
    frontier: TensorType
    steps: tuple[Step, ...]
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    untried: list[Action] | None = None
    visits: int = 0
    value: float = 0.0
    dead: bool = False


class SynoMCTS(Strategy):
    name = "mcts"

    def __init__(
        self,
        template: OperatorGraph,
        budget: Budget = Budget(),
        seed: int = 0,
        use_distance: bool = True,
        use_canonical: bool = True,
        rollouts_per_ask: int = 400,
    ):
        super().__init__(template, budget, seed)
        kinds = template.kinds()
        self.extra_bindings = {c: v for c, v in COEFFICIENTS.items() if c not in self.limits.bindings}
        bindings = {**self.limits.bindings, **self.extra_bindings}
        coefficients = sorted(v for v in bindings if v not in kinds or kinds[v] is VarKind.COEFFICIENT)
        self.synth = Synthesizer(template.input_type(), kinds, coefficients, bindings)
        out = TensorType(d._replace(size=s) for d, s in zip(template.input_type(), template.output_template()))
        self.root = Node(out, ())
        self.spatial = [d.spatial for d in template.input_type()]
        self.use_distance, self.use_canonical = use_distance, use_canonical
        self.rollouts_per_ask = rollouts_per_ask
        self.paths: dict[str, list[Node]] = {}
        self.scores: dict[str, float] = {}
        self._distances: dict[TensorType, int] = {}
        self.low, self.high = math.inf, -math.inf  # the finite scores told so far span these
        self.stats.update(pruned_distance=0, pruned_canonical=0, dead_ends=0)

    # -- ask/tell -------------------------------------------------------------------
    def ask(self, n: int = 1) -> list[Candidate]:
        found: list[Candidate] = []
        for _ in range(self.rollouts_per_ask * n):
            if len(found) == n or self.root.dead:
                break
            leaf = self._select()
            if leaf is None:
                break
            for node in self._path(leaf):  # counted now; the value arrives with tell()
                node.visits += 1
            steps = self._rollout(leaf)
            if steps is None:  # a random completion failed: no evidence about the subtree
                self.stats["dead_ends"] += 1
                continue
            graph = chain_graph(self.template, steps)
            graph.bindings = dict(self.extra_bindings)
            key = content_hash(graph)
            if key in self.scores:  # found again: it is as good as it was
                self._backup(self._path(leaf), self._normalised(self.scores[key]))
                continue
            if key in self.paths:  # proposed, score not back yet
                continue
            candidate = self.admit(graph, {"steps": len(steps)})
            if candidate is None:
                self._backup(self._path(leaf), 0.0)
                continue
            self.paths[candidate.key] = self._path(leaf)
            found.append(candidate)
        return found

    def tell(self, key: str, score: float) -> None:
        path = self.paths.pop(key, None)
        if path is None:
            return
        self.scores[key] = score
        if math.isfinite(score):
            self.low, self.high = min(self.low, score), max(self.high, score)
        self._backup(path, self._normalised(score))

    def _normalised(self, score: float) -> float:
        return scaled_reward(self.low, self.high, score)

    # -- tree -----------------------------------------------------------------------
    def _actions(self, node: Node) -> list[Action]:
        remaining = self.budget.max_primitives - len(node.steps) - 1
        out = []
        for a in self.synth.actions(node.frontier, node.steps):
            if self.use_canonical and violation(a.step, node.steps[-1] if node.steps else None):
                self.stats["pruned_canonical"] += 1
                continue
            if self.use_distance and self._distance(a.frontier) > remaining:
                self.stats["pruned_distance"] += 1
                continue
            if remaining < 0:
                continue
            out.append(a)
        return out

    def _distance(self, frontier: TensorType) -> int:
        if frontier not in self._distances:
            self._distances[frontier] = shape_distance(frontier, self.synth.target, self.synth.kinds)
        return self._distances[frontier]

    def _select(self) -> Node | None:
        """UCT down the tree with progressive widening: a node gets a new child only
        when its visits justify it, so good subtrees are revisited early."""
        node = self.root
        while True:
            if node.untried is None:
                node.untried = self._actions(node)
                self.rng.shuffle(node.untried)
            live = [c for c in node.children if not c.dead]
            if node.untried and (not live or len(node.children) < WIDENING * math.sqrt(node.visits + 1)):
                a = node.untried.pop()
                child = Node(a.frontier, (*node.steps, a.step), parent=node)
                node.children.append(child)
                return child
            if not live:
                node.dead = True
                if node.parent is None:
                    return None
                node = self.root
                continue
            node = max(live, key=lambda c: self._uct(node, c))

    def _uct(self, parent: Node, child: Node) -> float:
        if child.visits == 0:
            return math.inf
        return child.value / child.visits + EXPLORATION * math.sqrt(math.log(parent.visits + 1) / child.visits)

    def _rollout(self, node: Node) -> tuple[Step, ...] | None:
        """Random completion; the chain is complete when the frontier is the input shape."""
        frontier, steps = node.frontier, node.steps
        while True:
            if self.synth.done(frontier) and any(s.op == "share" for s in steps):
                if self.use_canonical and chain_violation(list(reversed(steps)), self.spatial):
                    self.stats["pruned_canonical"] += 1
                    return None
                return steps
            if len(steps) >= self.budget.max_primitives:
                return None
            actions = self._actions(Node(frontier, steps))
            if not actions:
                if node.steps == steps:
                    node.dead = not self.synth.done(frontier)
                return None
            a = self.rng.choice(actions)
            frontier, steps = a.frontier, (*steps, a.step)

    def _path(self, node: Node) -> list[Node]:
        path = []
        at: Node | None = node
        while at is not None:
            path.append(at)
            at = at.parent
        return path

    def _backup(self, path: list[Node], reward: float) -> None:
        for n in path:
            n.value += reward
