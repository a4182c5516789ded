"""Bottom-up synthesis of coordinate-level operators (Syno).

With Syno's primitives an operator is a chain from the input to the output.
Synthesis starts at the output shape and adds primitives towards the input:
each action takes the current *frontier* (the shape the part still to be built
must produce) and proposes a top-down primitive P and the frontier it needs,
checked by running P's own shape rule forward. A chain is complete when the
frontier equals the input shape."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from math import prod
from typing import ClassVar

from core.errors import TesseraError

from ..ir.graph import INPUT, OUTPUT, OperatorGraph
from ..ir.primitives import Primitive, make
from ..ir.symbolic import Size, VarKind, kind_of
from ..ir.tensor import Dim, TensorType


@dataclass(frozen=True)
class Step:
    op: str
    params: tuple  # sorted (name, value) pairs, hashable

    def __post_init__(self):
        object.__setattr__(self, "_hash", hash((self.op, self.params)))  # searches hash steps by the million

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined]

    def __reduce__(self):
        return (Step, (self.op, self.params))  # another process hashes strings differently

    @classmethod
    def of(cls, op: str, **params) -> Step:
        return cls(op, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items())))

    def prim(self) -> Primitive:
        return make(self.op, {k: list(v) if isinstance(v, tuple) else v for k, v in self.params})

    def get(self, name: str):
        for key, value in self.params:
            if key == name:
                return value
        raise KeyError(name)


@dataclass(frozen=True)
class Action:
    step: Step
    frontier: TensorType  # the frontier after adding the step (closer to the input)


def reduce_sizes(primaries: list[Size], coefficients: list[Size]) -> list[Size]:
    """The sizes a reduce may sum over, Syno's monomials with bounded exponents: a coefficient,
    or a channel primary divided by up to two different coefficients (C_in/g, C_out/(g*s))."""
    sizes = list(coefficients)
    for p in primaries:
        for k in range(3):
            for divisors in combinations(coefficients, k):
                sizes.append(p / prod(divisors, start=Size(1)))
    return sizes


class Synthesizer:
    """Enumerates bottom-up actions from a frontier towards `input_type`. `coefficients` are
    the small sizes it may introduce (K, s, g); reduces sum over `reduce_sizes` of them and
    the channel primaries of the input and `output_type`; LIMITS caps low-quality primitives
    per chain; frontiers (and so reduced sizes) must be whole at the reference `bindings`."""

    LIMITS: ClassVar[dict[str, int]] = {"expand": 1, "stride": 1, "shift": 2}

    def __init__(
        self,
        input_type: TensorType,
        kinds: Mapping[str, VarKind],
        coefficients: list[str],
        bindings: Mapping[str, int],
        output_type: TensorType | None = None,
    ):
        self.target = input_type
        self.kinds = dict(kinds)
        self.bindings = dict(bindings)
        self.coefficients = [Size.var(c) for c in coefficients]
        self._cache: dict[TensorType, tuple[list, dict[int, Action | None], set[Dim]]] = {}
        primaries = {
            v
            for t in (input_type, output_type or input_type)
            for d in t
            for v in d.size.variables
            if kind_of(v, kinds) is VarKind.PRIMARY and not d.spatial
        }
        self._whole: dict[Size, bool] = {}
        self._prims: dict[Step, Primitive] = {}  # steps repeat across frontiers
        self._by_size: dict[Size, tuple[list[tuple[Dim, Dim]], list[tuple[str, Dim]]]] = {}
        sizes = reduce_sizes([Size.var(v) for v in sorted(primaries)], self.coefficients)
        self.new_sizes = [size for size in sizes if self.whole(size)]
        self._new_axes = [Dim(size, False) for size in self.new_sizes]

    def done(self, frontier: TensorType) -> bool:
        return tuple(frontier) == tuple(self.target)

    def actions(self, frontier: TensorType, steps: tuple[Step, ...]) -> list[Action]:
        """Every valid action from the frontier within the per-chain LIMITS."""
        found = (self.action(frontier, i) for i in range(len(self.candidates(frontier))))
        blocked = self.blocked(steps)
        return [a for a in found if a is not None and a.step.op not in blocked]

    def blocked(self, steps: tuple[Step, ...]) -> set[str]:
        """The primitives a chain of `steps` may take no more of (LIMITS caps some)."""
        return {op for op, limit in self.LIMITS.items() if sum(s.op == op for s in steps) >= limit}

    def candidates(self, frontier: TensorType) -> list[tuple[Step, TensorType]]:
        """The steps that may lead to the frontier, each with the frontier it needs, unchecked
        (remembered per frontier; `action` checks one)."""
        return self._frontier(frontier)[0]

    def action(self, frontier: TensorType, i: int) -> Action | None:
        """The i-th candidate as an action if it is valid, checked only when first asked
        (remembered): a rollout needs only the first that works."""
        candidates, checked, have = self._frontier(frontier)
        if i not in checked:
            step, before = candidates[i]
            checked[i] = Action(step, before) if self._valid(step, before, frontier, have) else None
        return checked[i]

    def _frontier(self, frontier: TensorType):
        """(candidate steps, the verdicts on those checked so far, the frontier's axes)."""
        if frontier not in self._cache:
            self._cache[frontier] = (list(self._candidates(frontier)), {}, set(frontier))
        return self._cache[frontier]

    def whole(self, size: Size) -> bool:
        """Whether a size is a whole number at the reference bindings (remembered)."""
        known = self._whole.get(size)
        if known is None:
            known = self._whole[size] = size.evaluate(self.bindings).denominator == 1
        return known

    def _valid(self, step: Step, before: TensorType, frontier: TensorType, have: set[Dim]) -> bool:
        """The top-down rule is the judge; sizes must also be whole at the reference bindings
        (those of the frontier's axes, `have`, are)."""
        if not all(self.whole(d.size) for d in before if d not in have):
            return False
        prim = self._prims.get(step)
        if prim is None:
            prim = self._prims[step] = step.prim()
        try:
            return tuple(prim.infer([before], self.kinds)) == tuple(frontier)
        except TesseraError:
            return False

    def _candidates(self, s: TensorType) -> Iterator[tuple[Step, TensorType]]:
        """Every step that may lead to `s`, with what it needs; a search builds them for
        thousands of frontiers, so steps and size arithmetic come from caches (`_size_steps`)."""
        channel, spatial = s.channel_dims, s.spatial_dims
        first_spatial = spatial[0] if spatial else len(s)
        # reduce: the part above produced one more axis, summed here
        for d in range(first_spatial + 1):
            step = _step("reduce", dim=d)
            for axis in self._new_axes:
                yield step, TensorType([*s[:d], axis, *s[d:]])
        # share with a new weight axis: the leading axis exists only in the weight
        if channel and channel[0] == 0:
            rest = TensorType(s[1:])
            rest_channels = tuple(rest.channel_dims)
            if rest_channels:
                yield _step("share", dims=rest_channels, out=_text(s[0].size)), rest
                if len(rest_channels) > 1:
                    yield _step("share", dims=rest_channels[:1], out=_text(s[0].size)), rest
        # unfold: the window axis sits just before the spatial axes
        if spatial and first_spatial > 0 and s[first_spatial - 1].size in self.coefficients:
            before = TensorType([*s[: first_spatial - 1], *s[first_spatial:]])
            for d in before.spatial_dims:
                yield _step("unfold", dim=d, K=_text(s[first_spatial - 1].size)), before
        # split: two neighbouring channel axes came from one
        for d in channel:
            if d + 1 in channel:
                merged = Dim(_times(s[d].size, s[d + 1].size), False)
                yield _step("split", dim=d, B=_text(s[d + 1].size)), s.replace(d, [merged]).replace(d + 1, [])
        # merge: one channel axis came from two
        for d in channel:
            for outer, inner in self._size_steps(s[d].size)[0]:
                yield _step("merge", dim=d), s.replace(d, [outer, inner])
        for d in spatial:
            for amount in (1, -1):
                yield _step("shift", dim=d, amount=amount), s
        for d in channel:
            yield _step("expand", dim=d, size=_text(s[d].size)), s.replace(d, [])
        for d in spatial:
            for factor, strided in self._size_steps(s[d].size)[1]:
                yield _step("stride", dim=d, S=factor), s.replace(d, [strided])

    def _size_steps(self, size: Size) -> tuple[list[tuple[Dim, Dim]], list[tuple[str, Dim]]]:
        """What a merge or a stride needs of an axis of this size: (outer, inner) axes for each
        coefficient that may divide it, and (the coefficient, the spatial axis it strides)."""
        known = self._by_size.get(size)
        if known is None:
            merges = []
            for b in self.coefficients:
                outer = size / b
                if not outer.divisor_blockers(self.kinds) and outer != Size(1):
                    merges.append((Dim(outer, False), Dim(b, False)))
            strides = [(str(b), Dim(size * b, True)) for b in self.coefficients]
            known = self._by_size[size] = (merges, strides)
        return known


@lru_cache(maxsize=4096)
def _step(op: str, **params) -> Step:
    return Step.of(op, **params)


@lru_cache(maxsize=4096)
def _text(size: Size) -> str:
    return str(size)


@lru_cache(maxsize=4096)
def _times(a: Size, b: Size) -> Size:
    return a * b


def chain_graph(template: OperatorGraph, steps: tuple[Step, ...], name: str = "syno-sample") -> OperatorGraph:
    """Top-down graph input -> steps (reversed: they were added bottom-up) -> output."""
    g = OperatorGraph(
        template.input_shape,
        template.output_shape,
        spatial=template.spatial,
        variables={k: v.value for k, v in template.variables.items()},
        name=name,
    )
    prev = INPUT
    for step in reversed(steps):
        node = g.new_id(step.op)
        g.insert_node(node, step.prim())
        g.insert_edge(prev, node, 0)
        prev = node
    g.insert_edge(prev, OUTPUT, 0)
    return g


def chain_steps(graph: OperatorGraph) -> tuple[Step, ...]:
    """The steps of a chain-shaped graph in the order chain_graph takes them (bottom-up)."""
    steps: list[Step] = []
    node = OUTPUT
    while True:
        (src,) = graph.inputs_of(node)
        if src == INPUT:
            return tuple(steps)
        if src is None:
            raise TesseraError(f"{graph.name or 'the operator'} is not a chain from input to output")
        prim = graph.prim(src)
        steps.append(Step.of(prim.op, **prim.params))
        node = src
