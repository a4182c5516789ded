"""Canvas's random sampler: grow a micro-DAG of tensor-level primitives.

Primitive *types* are drawn uniformly (so blending is not favoured just because
there are O(n^2) ways to blend); merges are forced when open branches outnumber
the remaining steps; obviously redundant constructions are pruned; Canvas's shape rules
hold (at most one dynamic variable per tensor); dynamic variables are solved by shape
matching while sampling and by the budget solver afterwards (core/analysis/budget.py),
network-wide when the search knows the layers the operator will replace: one group
count G dividing every layer's channels, each variable whole at every layer. The chosen
G is written into the operator (a sample with G = 2 and one with G = 4 are two operators)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from core.errors import TesseraError

from ..analysis.budget import base_values, solve_budget
from ..analysis.shapes import ShapeReport, infer_shapes, whole_sizes
from ..analysis.solver import substitute
from ..data.conv_fit import ConvShape
from ..ir.graph import INPUT, OUTPUT, OperatorGraph
from ..ir.primitives import BINARY_OPS, UNARY_OPS, Broadcast, make
from ..ir.symbolic import Size, VarKind, kind_of, parse_size
from ..ir.tensor import TensorType
from .base import Budget, Candidate, Strategy

TYPES = ("group", "shift", "unfold", "fc", "elementwise", "fold", "softmax", "broadcast")
MAX_ATTEMPTS_PER_STEP = 12


#: elementwise functions f with f(g(x)) = g(x) for g among the values: a chain that adds nothing
ABSORBED_BY = {"relu": ("relu", "abs"), "abs": ("relu", "abs")}
#: a tensor blended with itself: x - x is zero, min(x, x) and max(x, x) are x
SELF_BLENDS = ("sub", "min", "max")


class CanvasSampler(Strategy):
    name = "canvas"
    network_wide = True

    def __init__(
        self,
        template: OperatorGraph,
        budget: Budget = Budget(),
        seed: int = 0,
        layers: Mapping[ConvShape, int] | None = None,
        min_primitives: int = 3,
    ):
        super().__init__(template, budget, seed, layers)
        self.min_primitives = min(min_primitives, budget.max_primitives)
        self.sizes = self.limits.sizes
        channels = [template.input_shape[0], template.output_shape[0]]
        common = math.gcd(*(parse_size(c).to_int(b) for b in self.sizes for c in channels))
        self.group_choices = [g for g in (2, 4, 8) if common % g == 0] or [1]
        self.channels = parse_size(template.input_shape[0])
        self.stats.update(
            {
                "shape_rule": 0,
                "not_whole": 0,
                "no_base": 0,
                "solver solved": 0,
                "solver invalid": 0,
                "solver over budget": 0,
            }
        )

    def ask(self, n: int = 1) -> list[Candidate]:
        found: list[Candidate] = []
        for _ in range(n * 200):
            if len(found) == n:
                break
            graph = self.sample()
            if graph is not None and (c := self.admit(graph)) is not None:
                found.append(c)
        return found

    # -- sampling one graph ------------------------------------------------------
    def sample(self) -> OperatorGraph | None:
        """One attempt; None when it dead-ends (counted as invalid)."""
        t = self.template
        g = OperatorGraph(
            t.input_shape,
            t.output_shape,
            spatial=t.spatial,
            variables={k: v.value for k, v in t.variables.items()},
            name="canvas-sample",
        )
        g.bindings = {"G": self.rng.choice(self.group_choices), "K": self.limits.bindings.get("K", 3)}
        steps = self.rng.randint(self.min_primitives, self.budget.max_primitives)
        report = infer_shapes(g)
        for step in range(steps):
            grown = self._grow(g, report, steps - step)
            if grown is None:
                self.stats["invalid"] += 1
                return None
            g, report = grown
        leaves = self._leaves(g)
        if len(leaves) != 1:
            self.stats["invalid"] += 1
            return None
        g.insert_edge(leaves[0], OUTPUT, 0)
        return self._finish(g)

    def _leaves(self, g: OperatorGraph) -> list[str]:
        return [n for n in g.topological_order() if n not in (OUTPUT,) and g.g.out_degree(n) == 0]

    def _grow(self, g: OperatorGraph, report: ShapeReport, remaining: int):
        leaves = self._leaves(g)
        for _ in range(MAX_ATTEMPTS_PER_STEP):
            must_merge = len(leaves) - 1 >= remaining
            op = "broadcast" if must_merge else self.rng.choice(TYPES)
            if op == "broadcast" and len(leaves) < 2 and len(report.shapes) < 3:
                continue
            sources = self._operands(g, op, leaves, report)
            shapes = [report.shapes[s] for s in sources]
            params = self._params(op, g, shapes[0])
            if params is None or self._redundant(g, op, params, sources):
                continue
            node = g.new_id(op)
            try:
                g.insert_node(node, make(op, params))
                for port, s in enumerate(sources):
                    g.insert_edge(s, node, port)
            except TesseraError:
                g.delete_node(node) if node in g.g else None
                continue
            new = infer_shapes(g)
            if node not in new.shapes:
                g.delete_node(node)
                continue
            if not _one_dynamic_per_tensor(new, g.kinds()):
                self.stats["shape_rule"] += 1
                g.delete_node(node)
                continue
            if not _whole(g, node, new, self.sizes):
                self.stats["not_whole"] += 1
                g.delete_node(node)
                continue
            pending = [c for c in new.constraints if c.node == node]
            if pending:  # solve by shape matching now: pick one valid value
                c = pending[0]
                g = substitute(g, {c.var: self.rng.choice(c.candidates)})
                new = infer_shapes(g)
                if node not in new.shapes:
                    continue
            return g, new
        return None

    def _operands(self, g: OperatorGraph, op: str, leaves: list[str], report: ShapeReport) -> list[str]:
        pool = [n for n in report.shapes if n != OUTPUT]
        if op == "broadcast":
            if len(leaves) >= 2:
                return self.rng.sample(leaves, 2)
            other = [n for n in pool if n != leaves[0]]
            return self.rng.sample([leaves[0], self.rng.choice(other)], 2)
        # mostly extend an open branch; sometimes branch off an earlier tensor
        return [self.rng.choice(leaves) if self.rng.random() < 0.8 else self.rng.choice(pool)]

    def _params(self, op: str, g: OperatorGraph, x) -> dict | None:
        channel, spatial = x.channel_dims, x.spatial_dims
        r = self.rng
        if op in ("group", "fold", "softmax") and not channel:
            return None
        if op in ("shift", "unfold") and not spatial:
            return None
        if op == "group":
            return {"dim": r.choice(channel), "G": "G"}
        if op == "shift":
            return {"dim": r.choice(spatial), "amount": r.choice((-1, 1))}
        if op == "unfold":
            return {"dim": r.choice(spatial), "K": "K"}
        if op == "fc":
            return {"out": g.next_dynamic_variable(), "groups": r.choice(("1", "G"))}
        if op == "elementwise":
            return {"fn": r.choice(UNARY_OPS)}
        if op == "fold":
            return {"dim": r.choice(channel), "fn": r.choice(("avg", "max"))}
        if op == "softmax":
            return {"dim": r.choice(channel)}
        return {"fn": r.choice(BINARY_OPS)}

    def _redundant(self, g: OperatorGraph, op: str, params: dict, sources: list[str]) -> bool:
        """Prune constructions that add nothing (Canvas's pruning rules): a branch blended with
        itself (x - x, min(x, x), max(x, x)); idempotent chains (relu or abs after relu or abs,
        -(-x)); softmax twice over one axis; two shifts of one axis (one shift or none would do)."""
        if op == "broadcast":
            return sources[0] == sources[1] and params["fn"] in SELF_BLENDS
        src = sources[0]
        if src == INPUT:
            return False
        prev = g.prim(src)
        if op == "elementwise" and prev.op == "elementwise":
            return prev.params["fn"] in ABSORBED_BY.get(params["fn"], ()) or prev.params["fn"] == params["fn"] == "neg"
        if op in ("softmax", "shift") and prev.op == op:
            return prev.params["dim"] == params["dim"]
        return False

    def _finish(self, g: OperatorGraph) -> OperatorGraph | None:
        """Apply the output equation, then the budget solver for what is left."""
        report = infer_shapes(g)
        if not report.ok:
            return None
        fixed = {c.var: c.candidates[0] for c in report.constraints if c.node == OUTPUT}
        if fixed:
            g = substitute(g, fixed)
            report = infer_shapes(g)
            if not report.ok:
                return None
        if any(isinstance(g.prim(c.node), Broadcast) for c in report.constraints):
            return None  # every broadcast was matched while sampling
        g = _fix_group_count(g)
        left = sorted(
            {v for n in g.primitive_nodes() for v in _size_vars(g, n)}
            & {v for v, k in g.kinds().items() if k.value == "dynamic"}
        )
        bases = base_values(g, left, self.channels, self.sizes)
        if bases is None:
            self.stats["no_base"] += 1
            return None
        solved, why = solve_budget(g, bases, self.limits.measure, self.limits.within)
        self.stats[f"solver {why or 'solved'}"] += 1
        return solved


def _fix_group_count(g: OperatorGraph) -> OperatorGraph:
    """The sample with its group count written in (G -> 4) where it uses one, so the
    operator's own words say how many groups, and its identity includes them."""
    if "G" not in g.mentioned_variables():
        return g
    return substitute(g, {"G": Size(g.bindings["G"])})


#: what a dynamic variable stands for while its value is open: divisible by every small factor
#: (lcm of 1..16), so only sizes that no choice of it makes whole are refused
OPEN_VALUE = 720720


def _whole(g: OperatorGraph, node: str, report: ShapeReport, sizes: list[dict[str, int]]) -> bool:
    """Whether the new node's shape and the sizes it needs whole (a group's channels, a
    weight's dimensions) are whole at every size searched, so a sample stops growing a
    branch that no value of its dynamic variables could build (K/2 groups, 1/4 channels)."""
    kinds = g.kinds()
    open_values = {v: OPEN_VALUE for v in g.mentioned_variables() if kind_of(v, kinds) is VarKind.DYNAMIC}
    needed = whole_sizes(g, report, node)
    for bindings in sizes:
        values = {**g.bindings, **bindings, **open_values}
        for _, size in needed:
            value = size.evaluate(values)
            if value.denominator != 1 or value <= 0:
                return False
    return True


def _one_dynamic_per_tensor(report: ShapeReport, kinds) -> bool:
    """Canvas's shape rule (Theorem 1): no tensor has more than one dynamic variable."""

    def dynamic(t: TensorType) -> set[str]:
        return {v for d in t for v in d.size.variables if kind_of(v, kinds) is VarKind.DYNAMIC}

    return all(len(dynamic(t)) <= 1 for t in report.shapes.values())


def _size_vars(g: OperatorGraph, node: str) -> set[str]:
    prim = g.prim(node)
    names: set[str] = set()
    for p in prim.spec:
        if p.kind == "size" and prim.params[p.name] not in (None, ""):
            names |= prim.size(p.name).variables
    return names
