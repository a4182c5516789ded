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

    @classmethod
    def of(cls, op: str, **params) -> Step:
        return cls(op, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items())))

    def prim(self) -> Primitive:
        return make(self.op, {k: list(v) if isinstance(v, tuple) else v for k, v in self.params})

    def get(self, name: str):
        return dict(self.params)[name]


@dataclass(frozen=True)
class Action:
    step: Step
    frontier: TensorType  # the frontier after adding the step (closer to the input)


class Synthesizer:
    """Enumerates bottom-up actions from a frontier. `coefficients` are the small
    sizes it may introduce (K, s); LIMITS caps low-quality primitives per chain;
    frontiers must have whole sizes at the reference `bindings`."""

    LIMITS: ClassVar[dict[str, int]] = {"expand": 1, "stride": 1, "shift": 2}

    def __init__(
        self, input_type: TensorType, kinds: Mapping[str, VarKind], coefficients: list[str], bindings: Mapping[str, int]
    ):
        self.target = input_type
        self.kinds = dict(kinds)
        self.bindings = dict(bindings)
        self.coefficients = [Size.var(c) for c in coefficients]
        self._cache: dict[TensorType, list[Action]] = {}
        primaries = [
            Size.var(v)
            for d in input_type
            for v in d.size.variables
            if kind_of(v, kinds) is VarKind.PRIMARY and not d.spatial
        ]
        self.new_sizes = primaries + self.coefficients  # sizes a reduce may sum over

    def done(self, frontier: TensorType) -> bool:
        return tuple(frontier) == tuple(self.target)

    def actions(self, frontier: TensorType, steps: tuple[Step, ...]) -> list[Action]:
        counts = {op: sum(1 for s in steps if s.op == op) for op in self.LIMITS}
        if frontier not in self._cache:
            self._cache[frontier] = [
                Action(step, before)
                for step, before in self._candidates(frontier)
                if self._valid(step, before, frontier)
            ]
        return [
            a
            for a in self._cache[frontier]
            if a.step.op not in self.LIMITS or counts[a.step.op] < self.LIMITS[a.step.op]
        ]

    def _valid(self, step: Step, before: TensorType, frontier: TensorType) -> bool:
        """The top-down rule is the judge; sizes must also be whole at the reference bindings."""
        try:
            if tuple(step.prim().infer([before], self.kinds)) != tuple(frontier):
                return False
            return all(d.size.evaluate(self.bindings).denominator == 1 for d in before)
        except TesseraError:
            return False

    def _candidates(self, s: TensorType) -> Iterator[tuple[Step, TensorType]]:
        channel, spatial = s.channel_dims, s.spatial_dims
        first_spatial = spatial[0] if spatial else len(s)
        # reduce: the part above produced one more axis, summed here
        for d in range(first_spatial + 1):
            for size in self.new_sizes:
                yield Step.of("reduce", dim=d), TensorType([*s[:d], Dim(size, False), *s[d:]])
        # share with a new weight axis: the leading axis exists only in the weight
        if channel and channel[0] == 0:
            rest = TensorType(s[1:])
            rest_channels = rest.channel_dims
            if rest_channels:
                yield Step.of("share", dims=rest_channels, out=str(s[0].size)), rest
                if len(rest_channels) > 1:
                    yield Step.of("share", dims=rest_channels[:1], out=str(s[0].size)), rest
        # unfold: the window axis sits just before the spatial axes
        if spatial and first_spatial > 0 and s[first_spatial - 1].size in self.coefficients:
            before = TensorType([*s[: first_spatial - 1], *s[first_spatial:]])
            for d in before.spatial_dims:
                yield Step.of("unfold", dim=d, K=str(s[first_spatial - 1].size)), before
        # split: two neighbouring channel axes came from one
        for d in channel:
            if d + 1 in channel:
                merged = Dim(s[d].size * s[d + 1].size, False)
                yield Step.of("split", dim=d, B=str(s[d + 1].size)), s.replace(d, [merged]).replace(d + 1, [])
        # merge: one channel axis came from two
        for d in channel:
            for b in self.coefficients:
                outer = s[d].size / b
                if not outer.divisor_blockers(self.kinds) and outer != Size(1):
                    yield Step.of("merge", dim=d), s.replace(d, [Dim(outer, False), Dim(b, False)])
        for d in spatial:
            for amount in (1, -1):
                yield Step.of("shift", dim=d, amount=amount), s
        for d in channel:
            yield Step.of("expand", dim=d, size=str(s[d].size)), s.replace(d, [])
        for d in spatial:
            for b in self.coefficients:
                yield Step.of("stride", dim=d, S=str(b)), s.replace(d, [Dim(s[d].size * b, True)])


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
