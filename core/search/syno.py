"""Syno's synthesis space for one template, shared by MCTS and random sampling.

A partial chain is a frontier, the steps taken (bottom-up) and their coordinate
expressions. Actions are the Synthesizer's primitives, filtered by the canonicalization
rules (pair rules, and coordinate rewrites that fire) and pruned by shape distance against
the remaining primitive budget. `key` is the canonical form of a partial chain, so equal
states reached by different paths are one state, and complete chains with equal forms are
proposed once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from random import Random

from ..data.replacement import ConvShape
from ..ir.graph import OperatorGraph
from ..ir.symbolic import VarKind, parse_size
from ..ir.tensor import Dim, TensorType
from .base import Budget, Candidate, SearchError, Strategy
from .canonical import chain_violation, unfold_window_summed, violation
from .chain import Action, Step, Synthesizer, chain_graph
from .coords import Algebra, Coords
from .distance import shape_distance

#: small sizes the synthesis may introduce beyond the template's own: Syno's coefficients.
#: Syno's artifact has g = 32 for 64-512 channels; 8 keeps C/(g*s) whole down to the
#: proxy network's 16 channels (core.train.settings), so a grouped candidate fits every layer
COEFFICIENTS = {"K": 3, "s": 2, "g": 8}


@dataclass(frozen=True)
class Partial:
    frontier: TensorType
    steps: tuple[Step, ...]
    coords: Coords


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
        self._distances: dict[TensorType, int] = {}
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
        return list(self._allowed(p, self.synth.actions(p.frontier, p.steps)))

    def _allowed(self, p: Partial, actions: Iterable[Action]) -> Iterator[Action]:
        """The actions that pass the pair rules and fit the primitive budget, lazily (a
        rollout needs only the first that works)."""
        remaining = self.max_primitives - len(p.steps) - 1
        if remaining < 0:
            return
        stats = self.strategy.stats
        last = p.steps[-1] if p.steps else None
        shared = any(s.op == "share" for s in p.steps)
        for a in actions:
            if self.use_canonical and (violation(a.step, last) or unfold_window_summed(a.step, last, a.frontier)):
                stats["pruned_canonical"] += 1
            elif self.use_distance and self._needed(a, shared, remaining) > remaining:
                stats["pruned_distance"] += 1
            else:
                yield a

    def _needed(self, a: Action, shared: bool, remaining: int) -> int:
        """Steps still needed after the action (at least; exactly as far as above `remaining`):
        the shape distance, and a complete chain has a share, which removes an axis that
        another step then adds back if the shape is reached. A step adds or removes at most
        one axis, which prunes most actions before the distance is computed."""
        axes = abs(len(a.frontier) - len(self.synth.target))
        if axes > remaining:
            return axes
        distance = self._distance(a.frontier)
        if shared or a.step.op == "share":
            return distance
        return distance or 2

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

    def _distance(self, frontier: TensorType) -> int:
        if frontier not in self._distances:
            self._distances[frontier] = shape_distance(frontier, self.synth.target, self.synth.kinds)
        return self._distances[frontier]

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

    def _options(self, p: Partial, rng: Random) -> Iterator[Action]:
        return self._allowed(p, self.synth.drawn(p.frontier, p.steps, rng))

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
