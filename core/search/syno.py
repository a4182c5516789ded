"""Syno's synthesis space for one template, shared by MCTS and random sampling.

A partial chain is a frontier, the steps taken (bottom-up) and their coordinate
expressions. Actions are the Synthesizer's primitives, filtered by the canonicalization
rules (pair rules, and coordinate rewrites that fire) and pruned by shape distance against
the remaining primitive budget. `key` is the canonical form of a partial chain, so equal
states reached by different paths are one state, and complete chains with equal forms are
proposed once."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from random import Random

from ..data.conv_fit import ConvShape
from ..ir.graph import OperatorGraph
from ..ir.symbolic import VarKind, parse_size
from ..ir.tensor import Dim, TensorType
from .base import Budget, Candidate, SearchError, Strategy
from .canonical import chain_violation, unfold_window_summed, violation
from .chain import Action, Step, Synthesizer, chain_graph
from .coords import Algebra, Coords
from .distance import ShapeDistance

#: small sizes the synthesis may introduce beyond the template's own: Syno's coefficients.
#: Syno's artifact has g = 32 for 64-512 channels; 8 keeps C/(g*s) whole down to the
#: proxy network's 16 channels (core.train.settings), so a grouped candidate fits every layer
COEFFICIENTS = {"K": 3, "s": 2, "g": 8}


@dataclass(frozen=True)
class Partial:
    frontier: TensorType
    steps: tuple[Step, ...]
    coords: Coords


#: a candidate step's verdict under the pair rules (0: not judged yet)
DROPPED, KEPT = 1, 2


#: what decides which of a frontier's candidates are open: the step below, the primitives
#: left, whether the chain has a share, the primitives it may take no more of
Situation = tuple[Step | None, int, bool, frozenset[str]]


@dataclass
class Judged:
    """What a search remembers of one frontier: its candidate steps (Synthesizer.candidates),
    each one's shape distance (-1 until computed), for each step below which candidates the
    pair rules drop (DROPPED, KEPT), and for each situation the candidates left open with how
    many each rule pruned."""

    candidates: list[tuple[Step, TensorType]]
    distances: list[int] = field(init=False)
    rules: dict[Step | None, bytearray] = field(default_factory=dict)
    open: dict[Situation, tuple[list[int], int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.distances = [-1] * len(self.candidates)


class SynoSpace:
    """`reductions` (size expressions) fixes the sums every operator starts with from the
    output, as Syno's search chooses its reductions before its views: each summed axis sits
    after the output's channel axes, the first given nearest the output; the search explores
    what lies above them."""

    def __init__(
        self,
        template: OperatorGraph,
        strategy: Strategy,
        use_distance: bool,
        use_canonical: bool,
        reductions: Sequence[str] = (),
    ):
        kinds = template.kinds()
        bindings = strategy.limits.bindings
        self.extra_bindings = {c: v for c, v in COEFFICIENTS.items() if c not in bindings}
        bindings = {**bindings, **self.extra_bindings}
        coefficients = sorted(v for v in bindings if v not in kinds or kinds[v] is VarKind.COEFFICIENT)
        out = TensorType(d._replace(size=s) for d, s in zip(template.input_type(), template.output_template()))
        self.synth = Synthesizer(template.input_type(), kinds, coefficients, bindings, out)
        self.algebra = Algebra(self.synth.kinds)
        self.template, self.strategy = template, strategy
        self.max_primitives = strategy.budget.max_primitives
        self.spatial = [d.spatial for d in template.input_type()]
        self.use_distance, self.use_canonical = use_distance, use_canonical
        variables = [*self.synth.kinds, *map(str, self.synth.coefficients)]
        self.distance = ShapeDistance(self.synth.target, self.synth.kinds, variables)
        self._judged: dict[TensorType, Judged] = {}
        self._pairs: dict[tuple[Step, Step | None], bool] = {}
        self.seen: set[tuple] = set()  # canonical forms of every complete chain proposed
        strategy.stats.update(pruned_distance=0, pruned_canonical=0, dead_ends=0, equivalent=0)
        self.root = self._reduced(Partial(out, (), self.algebra.start(out)), reductions)

    def _reduced(self, p: Partial, reductions: Sequence[str]) -> Partial:
        at = len(p.frontier.channel_dims)
        for size in map(parse_size, reductions):
            frontier = TensorType([*p.frontier[:at], Dim(size, False), *p.frontier[at:]])
            found = [a for a in self.actions(p) if a.step == Step.of("reduce", dim=at) and a.frontier == frontier]
            child = self.child(p, found[0]) if found else None
            if child is None:
                raise SearchError(
                    f"the search cannot start by summing {size} over {p.frontier}: a reduce sums a coefficient"
                    f" or a channel size over at most two coefficients, whole at the template's bindings,"
                    f" with the chain still within {self.max_primitives} primitives"
                )
            p = child
        return p

    # -- states --------------------------------------------------------------------------
    def key(self, p: Partial) -> tuple:
        """Equal keys: equal frontiers, step counts, limited primitives left and coordinate forms."""
        limited = tuple(sum(s.op == op for s in p.steps) for op in (*Synthesizer.LIMITS, "share"))
        return (p.frontier, len(p.steps), limited, self.algebra.key(p.coords))

    def coords_of(self, steps: tuple[Step, ...]) -> Coords:
        """The coordinate expressions of a complete chain given by its steps (bottom-up)."""
        shapes = [self.synth.target]
        for step in reversed(steps):
            shapes.append(step.prim().infer([shapes[-1]], self.synth.kinds))
        coords = self.algebra.start(shapes[-1])
        for step, before in zip(steps, reversed(shapes[:-1])):
            coords = self.algebra.apply(coords, step, before)
        return coords

    def form(self, steps: tuple[Step, ...]) -> tuple:
        """The canonical form of a complete chain given by its steps (bottom-up)."""
        return self.algebra.key(self.coords_of(steps))

    def violation(self, p: Partial) -> str | None:
        """Why a chain is not canonical (the first rule it breaks), or None."""
        rewrites = p.coords.rewrites + p.coords.approximate
        if rewrites:
            return f"coordinates: {rewrites[0]} (a simpler chain computes the same)"
        return chain_violation(list(reversed(p.steps)), self.spatial)

    def complete(self, p: Partial) -> bool:
        return self.synth.done(p.frontier) and any(s.op == "share" for s in p.steps)

    def actions(self, p: Partial) -> list[Action]:
        return list(self._options(p, None))

    def _options(self, p: Partial, rng: Random | None) -> Iterator[Action]:
        """The actions that fit the per-chain limits, pass the pair rules and fit the primitive
        budget, in a random order with `rng`, lazily (a rollout needs only the first that
        works). A search meets each frontier in the same situation many times, so which
        candidates are open there is worked out once (`_open`); whether an open step is valid
        at all, the costly check, is asked only of those drawn."""
        remaining = self.max_primitives - len(p.steps) - 1
        if remaining < 0:
            return
        judged = self._judged.get(p.frontier)
        if judged is None:
            judged = self._judged[p.frontier] = Judged(self.synth.candidates(p.frontier))
        last = p.steps[-1] if p.steps else None
        situation = (last, remaining, any(s.op == "share" for s in p.steps), frozenset(self.synth.blocked(p.steps)))
        found = judged.open.get(situation)
        if found is None:
            found = judged.open[situation] = self._open(judged, situation)
        indices, canonical, distance = found
        self.strategy.stats["pruned_canonical"] += canonical
        self.strategy.stats["pruned_distance"] += distance
        order = indices if rng is None else (indices[k] for k in drawn(len(indices), rng))
        for i in order:
            a = self.synth.action(p.frontier, i)
            if a is not None:
                yield a

    def _open(self, judged: Judged, situation: Situation) -> tuple[list[int], int, int]:
        """The candidates open in a situation, and how many the pair rules and the shape
        distance pruned. The cheap checks come first; each verdict is remembered."""
        last, remaining, shared, blocked = situation
        rules = judged.rules.get(last)
        if rules is None:
            rules = judged.rules[last] = bytearray(len(judged.candidates))
        target, distances = len(self.synth.target), judged.distances
        indices, canonical, distance = [], 0, 0
        for i, (step, before) in enumerate(judged.candidates):
            if step.op in blocked:
                continue
            if self.use_canonical:
                if not rules[i]:
                    rules[i] = DROPPED if self._redundant(step, last, before) else KEPT
                if rules[i] == DROPPED:
                    canonical += 1
                    continue
            # steps still needed (at least): a step adds or removes at most one axis, the shape
            # distance, and a complete chain has a share, which removes an axis that another
            # step then adds back if the shape is reached
            if self.use_distance and abs(len(before) - target) > remaining:
                distance += 1
                continue
            if self.use_distance:
                if distances[i] < 0:
                    distances[i] = self.distance(before)
                needed = distances[i] if shared or step.op == "share" else distances[i] or 2
                if needed > remaining:
                    distance += 1
                    continue
            indices.append(i)
        return indices, canonical, distance

    def _redundant(self, step: Step, last: Step | None, before: TensorType) -> bool:
        """Whether a rule drops `step` right above `last` (the pair rules' verdicts remembered
        per pair: frontiers are many, pairs of steps far fewer)."""
        pair = self._pairs.get((step, last))
        if pair is None:
            pair = self._pairs[(step, last)] = violation(step, last) is not None
        return pair or unfold_window_summed(step, last, before) is not None

    def child(self, p: Partial, a: Action) -> Partial | None:
        """The partial chain one action further, or None if a coordinate rewrite fires there
        (a simpler chain computes the same; only with canonicalization)."""
        coords = self.algebra.apply(p.coords, a.step, a.frontier)
        if self.use_canonical and len(coords.rewrites) + len(coords.approximate) > len(p.coords.rewrites) + len(
            p.coords.approximate
        ):
            self.strategy.stats["pruned_canonical"] += 1
            return None
        return Partial(a.frontier, (*p.steps, a.step), coords)

    # -- sampling ------------------------------------------------------------------------
    def rollout(self, p: Partial, rng: Random) -> Partial | None:
        """A random completion of p, or None if it ran into dead ends. Steps are drawn at
        random; from a state with no way on (or a complete chain a rule rejects) the next
        option of the state before is tried, up to twice the primitives left in steps taken:
        the shape distance is a lower bound, so many states it admits are dead ends, and
        starting over costs more than looking a step back."""
        steps = 2 * (self.max_primitives - len(p.steps))
        stack = [(p, self._options(p, rng))]
        while stack and steps > 0:
            q, options = stack[-1]
            if self.complete(q):
                if not (self.use_canonical and chain_violation(list(reversed(q.steps)), self.spatial)):
                    return q
                self.strategy.stats["pruned_canonical"] += 1
                stack.pop()
                continue
            nxt = next((c for c in (self.child(q, a) for a in options) if c is not None), None)
            if nxt is None:
                stack.pop()
                continue
            steps -= 1
            stack.append((nxt, self._options(nxt, rng)))
        return None

    def propose(self, p: Partial) -> Candidate | None:
        """The candidate of a complete chain if it is new, valid and within budget. A form is
        remembered once proposed: another chain of it may still fit where this one did not
        (the order of views changes the cost)."""
        form = self.algebra.key(p.coords)
        if form in self.seen:
            self.strategy.stats["equivalent"] += 1
            return None
        graph = chain_graph(self.template, p.steps)
        graph.bindings = dict(self.extra_bindings)
        candidate = self.strategy.admit(graph, {"steps": len(p.steps)})
        if candidate is not None:
            self.seen.add(form)
        return candidate


def drawn(n: int, rng: Random) -> Iterator[int]:
    """0..n-1 in a random order, each drawn when it is needed (Fisher-Yates, run lazily): a
    rollout usually takes one of the first few, and shuffling every option list up front was a
    tenth of a search's time."""
    order = list(range(n))
    for i in range(n - 1, -1, -1):
        j = int(rng.random() * (i + 1))
        order[i], order[j] = order[j], order[i]
        yield order[i]


class SynoRandom(Strategy):
    """Random sampling in Syno's space: independent random completions from the output, each
    step drawn uniformly from the actions MCTS would have (no tree, no statistics): the
    baseline MCTS must beat. Judged network-wide like MCTS."""

    name = "random"
    network_wide = True

    def __init__(
        self,
        template: OperatorGraph,
        budget: Budget = Budget(),
        seed: int = 0,
        layers: Mapping[ConvShape, int] | None = None,
        use_distance: bool = True,
        use_canonical: bool = True,
        reductions: Sequence[str] = (),
        attempts: int = 400,
    ):
        super().__init__(template, budget, seed, layers)
        self.space = SynoSpace(template, self, use_distance, use_canonical, reductions)
        self.attempts = attempts

    def ask(self, n: int = 1) -> list[Candidate]:
        found: list[Candidate] = []
        for _ in range(self.attempts * n):
            if len(found) == n:
                break
            p = self.space.rollout(self.space.root, self.rng)
            if p is None:
                self.stats["dead_ends"] += 1
                continue
            candidate = self.space.propose(p)
            if candidate is not None:
                found.append(candidate)
        return found
