"""Syno-style search: Monte-Carlo tree search over partial bottom-up chains.

States are partial chains in Syno's space (core.search.syno), merged by their canonical
form: a transposition table maps each form to one node, so equal states reached by
different paths share their statistics (the tree is a DAG; a reward is backed up along the
path that found it). A rollout finishes a chain at random; the operator is proposed through
`ask` and its score comes back through `tell`, turned into a reward on a fixed scale
(core.search.reward). What counts:

- `visits` and `value` only hold rollouts whose reward came back;
- a rollout that found no new valid operator within budget (none at all, one over budget, or
  one proposed before) is a dead end, counted apart: it lowers its path's exploration bonus and
  weighs DEAD_END_WEIGHT of a zero reward in its mean (an operator drawn again once backed up its
  old reward, and in a 60-minute loop one subtree so gathered 671 visits from 119 operators);
- a proposed operator whose score has not come back is pending, likewise.

FLOPs are a hard cap (Strategy.admit), network-wide when the search knows the network: the
operator's FLOPs summed over every convolution it replaces, against the original's (so an
operator that fits the template's one layer but costs more across the network is refused)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..data.conv_fit import ConvShape
from ..ir.graph import OperatorGraph
from .base import Budget, Candidate, Strategy
from .chain import Action
from .reward import RewardScale
from .syno import Partial, SynoSpace

#: UCT's exploration constant, for rewards in [0, 1] (core.search.reward). The loop's rewards are
#: sparse: most candidates earn near 0 and a few near 1. On a surrogate of them (chains of share,
#: reduce and shift only earn 1, others at most 0.1; at most 8 primitives; 150 proposals;
#: `python -m tests.benchmarks.bench_discovery --section exploration`), 2026-11-28, seeds 0-9 with
#: dead ends diluting (DEAD_END_WEIGHT 0.1): 27.5 found at 0.2, 16.3 at 0.35 (without the
#: dilution 34.7 and 20.5); seeds 0-4: 12.8 at sqrt(2) (Syno's UCB1 constant), 15.0 at 0.7, 6.2 at
#: 0.5; random sampling 7.6. 0.35 led on 2026-11-27 (58.0 against 53.8), before later changes to the
#: space and to what a re-draw earns; 0.2 has led since
EXPLORATION = 0.2
#: progressive widening: a node gets a new child while it has fewer than WIDENING x sqrt(tries + 1)
#: (on the same surrogate at 0.2, seeds 0-4, 2026-11-28: 30.8 at 0.75, 23.6 at 1.5, 23.0 at 3; within
#: the seeds' spread, so unchanged until a loop says otherwise)
WIDENING = 1.5
#: how much of a zero reward a dead end weighs in its path's mean. At 0, a subtree that has run
#: out of new operators keeps the mean of the ones it gave: a 30-minute loop (its store replayed,
#: 2026-11-28) narrowed onto one whose rollouts had dead-ended 2,733 times against 23 rewards, and
#: stopped proposing. Continued from that state for 150 asks (rewards of the nearest scored
#: operator; a one-off replay of its store at exploration 0.35): 8 empty asks at 0, none at 0.03,
#: 0.1, 0.3 or 1; with this code the same 30-minute run proposed to its end. On the planted Operator 1
#: (tests/core/test_search_planted.py, seeds 0-9, asks until found, limit 200, exploration 0.2)
#: 0.1 finds all ten (mean 63 asks; 49 at 0); 0.3 and 1 (dead ends as zero rewards) miss one, and
#: 1 needs over 125 asks for six. The cost on the exploration surrogate is above
DEAD_END_WEIGHT = 0.1


@dataclass(eq=False)
class Node:
    state: Partial
    children: list[Node] = field(default_factory=list)
    untried: list[Action] | None = None
    visits: int = 0  # rollouts whose reward is known
    value: float = 0.0  # their rewards' sum
    pending: int = 0  # rollouts whose reward has not come back yet
    dead_ends: int = 0  # rollouts that proposed nothing
    dead: bool = False  # nothing left to try below

    @property
    def tries(self) -> int:
        return self.visits + self.pending + self.dead_ends

    def mean(self, default: float) -> float:
        """The rewards' mean, dead ends diluting it (DEAD_END_WEIGHT); `default` before any reward."""
        return self.value / (self.visits + DEAD_END_WEIGHT * self.dead_ends) if self.visits else default


class SynoMCTS(Strategy):
    name = "mcts"
    network_wide = True

    def __init__(
        self,
        template: OperatorGraph,
        budget: Budget = Budget(),
        seed: int = 0,
        use_distance: bool = True,
        use_canonical: bool = True,
        rollouts_per_ask: int = 400,
        scores: str = "bounded",
        layers: Mapping[ConvShape, int] | None = None,
        reductions: Sequence[str] = (),
    ):
        super().__init__(template, budget, seed, layers)
        self.space = SynoSpace(template, self, use_distance, use_canonical, reductions)
        self.reward = RewardScale(scores)
        self.rollouts_per_ask = rollouts_per_ask
        self.root = Node(self.space.root)
        self.table: dict[tuple, Node] = {self.space.key(self.root.state): self.root}
        self.paths: dict[str, list[Node]] = {}  # candidate key -> the path that proposed it
        self.stats.update(transpositions=0)

    # -- ask/tell -------------------------------------------------------------------
    def ask(self, n: int = 1) -> list[Candidate]:
        found: list[Candidate] = []
        for _ in range(self.rollouts_per_ask * n):
            if len(found) == n:
                break
            path = self._select()
            if path is None:
                break
            leaf = path[-1]
            done = self.space.rollout(leaf.state, self.rng)
            if self._untried(leaf) == [] and not leaf.children:
                leaf.dead = True  # a complete chain with nothing below: its one operator is drawn now
            if done is None:
                self._dead_end(path)
                continue
            candidate = self.space.propose(done)
            if candidate is None:
                self._dead_end(path)
                continue
            for node in path:
                node.pending += 1
            self.paths[candidate.key] = path
            found.append(candidate)
        return found

    def tell(self, key: str, score: float) -> None:
        path = self.paths.pop(key, None)
        if path is None:
            return
        for node in path:
            node.pending -= 1
        self._backup(path, self.reward(score))

    # -- tree -----------------------------------------------------------------------
    def _untried(self, node: Node) -> list[Action]:
        if node.untried is None:
            node.untried = self.space.actions(node.state)
            self.rng.shuffle(node.untried)
        return node.untried

    def _select(self) -> list[Node] | None:
        """UCT down the DAG with progressive widening: a node gets a new child only when its
        tries justify it, so good subtrees are revisited early. Returns the path taken."""
        path = [self.root]
        while True:
            node = path[-1]
            untried = self._untried(node)
            live = [c for c in node.children if not c.dead]
            if untried and (not live or len(node.children) < WIDENING * math.sqrt(node.tries + 1)):
                child = self._expand(node, untried.pop())
                if child is not None:
                    return [*path, child]
                continue
            if not live:
                node.dead = True
                if node is self.root:
                    return None
                path = [self.root]
                continue
            path.append(self._best(node, live))

    def _expand(self, node: Node, action: Action) -> Node | None:
        state = self.space.child(node.state, action)
        if state is None:
            return None
        key = self.space.key(state)
        child = self.table.get(key)
        if child is None:
            child = self.table[key] = Node(state)
        elif child.dead or child in node.children:
            return None
        else:
            self.stats["transpositions"] += 1
        node.children.append(child)
        return child

    @staticmethod
    def _best(parent: Node, children: list[Node]) -> Node:
        """The child of highest UCT: mean reward (the parent's while the child has none) plus an
        exploration bonus that shrinks with every try, dead ends included. An untried child
        comes first. The parent's part is worked out once (selection is a search's inner loop)."""
        default, spread = parent.mean(0.5), EXPLORATION * math.sqrt(math.log(parent.tries + 1))
        best, high = children[0], -math.inf
        for child in children:
            tries = child.tries
            if tries == 0:
                return child
            score = child.mean(default) + spread / math.sqrt(tries)
            if score > high:
                best, high = child, score
        return best

    def _dead_end(self, path: list[Node]) -> None:
        self.stats["dead_ends"] += 1
        for node in path:
            node.dead_ends += 1

    def _backup(self, path: list[Node], reward: float) -> None:
        for node in path:
            node.visits += 1
            node.value += reward
