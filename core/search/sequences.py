"""NAS-PTE's search: random transformation sequences on the template's loop nest.

Each sample is a random mix of architecture-changing steps (bottleneck, group)
and meaning-preserving ones (interchange, split, fuse, unroll, vectorize,
parallel), drawn one at a time on the current nest so that every step applies;
a sequence whose steps break a dependence is rejected (counted "illegal"). The
resulting operator goes through the common screening (valid, in budget, not
seen before) and, when a `screen` is given (core.train.capacity.CapacityJudge), through
Fisher Potential against the original network, NAS-PTE's filter. The sequence
travels with the candidate (info["sequence"]) so its schedule can be compiled
and measured for the survivors."""

from __future__ import annotations

from collections.abc import Callable

from ..codegen.loopnest_ir import checked_sequence, result_operator
from ..ir.graph import OperatorGraph
from ..ir.loopnest import BASES, GROUP_PARTNERS, LoopNestError, Nest
from ..ir.sequence import Sequence, Step, apply_step, make_step, sequence_document, start
from .base import Budget, Candidate, SearchError, Strategy

FACTORS = (2, 4, 8)
SCHEDULE_OPS = ("interchange", "split", "fuse", "unroll", "vectorize", "parallel")
ATTEMPTS_PER_STEP = 20


class SequenceSearch(Strategy):
    name = "sequences"

    def __init__(
        self,
        template: OperatorGraph,
        budget: Budget = Budget(),
        seed: int = 0,
        nest: str = "conv2d",
        architecture_steps: tuple[int, int] = (1, 2),
        schedule_steps: tuple[int, int] = (0, 4),
        screen: Callable[[OperatorGraph], dict] | None = None,
    ):
        super().__init__(template, budget, seed)
        if nest not in BASES:
            raise SearchError(f"unknown nest {nest!r} (known: {', '.join(BASES)})")
        sizes = {k: v for k, v in self.limits.bindings.items() if k in BASES[nest].variables}
        self.base = Sequence(nest, (), sizes, name="sequence-sample")
        try:
            self.start, _ = start(self.base)
        except LoopNestError as e:
            raise SearchError(f"template {template.name or '?'} cannot start a {nest} nest: {e}") from None
        self.architecture_steps, self.schedule_steps = architecture_steps, schedule_steps
        self.screen = screen
        self.stats.update(illegal=0, fisher_rejected=0)

    def ask(self, n: int = 1) -> list[Candidate]:
        found: list[Candidate] = []
        for _ in range(n * 200):
            if len(found) == n:
                break
            candidate = self.try_one()
            if candidate is not None:
                found.append(candidate)
        return found

    def try_one(self) -> Candidate | None:
        """Sample one sequence and screen it; None when it is rejected (see stats)."""
        seq = self.sample()
        report = checked_sequence(seq)
        if not report.legal:
            self.stats["illegal"] += 1
            return None
        graph = result_operator(report.final, "nas-pte-sample").graph
        candidate = self.admit(graph, {"sequence": sequence_document(seq), "steps": [s.text() for s in seq.steps]})
        if candidate is None or self.screen is None:
            return candidate
        verdict = self.screen(graph)
        candidate.info["fisher"] = verdict
        if not verdict["passes"]:
            self.stats["fisher_rejected"] += 1
            return None
        return candidate

    # -- sampling -----------------------------------------------------------------------
    def sample(self) -> Sequence:
        kinds = ["architecture"] * self.rng.randint(*self.architecture_steps) + ["schedule"] * self.rng.randint(
            *self.schedule_steps
        )
        self.rng.shuffle(kinds)
        program, steps = self.start, []
        for kind in kinds:
            for _ in range(ATTEMPTS_PER_STEP):
                nest = program.parts[0]
                step = self._architecture(nest) if kind == "architecture" else self._schedule(nest)
                if step is None:
                    continue
                try:
                    program, _ = apply_step(program, step)
                except LoopNestError:
                    continue
                steps.append(step)
                break
        return self.base.with_steps(steps)

    def _architecture(self, nest: Nest) -> Step | None:
        """bottleneck or group with a factor of 2, 4 or 8; depthwise (G = extent) for channel
        groups and a single tap for kernel bottlenecks."""
        loops = [
            l for l in nest.loops if len(l.pieces) == 1 and l.pieces[0].iterator in ("co", "ci", "oh", "ow", "kh", "kw")
        ]
        loop = self.rng.choice(loops)
        it = loop.pieces[0].iterator
        partners = [l.name for l in nest.loops if it in GROUP_PARTNERS and l.iterators == (GROUP_PARTNERS[it],)]
        op = "group" if partners and self.rng.random() < 0.5 else "bottleneck"
        whole = (op == "group" and it == "co") or it in ("kh", "kw")
        factors = [f for f in FACTORS if f < loop.extent and loop.extent % f == 0]
        factors += [loop.extent] if whole and loop.extent > 1 else []
        if not factors:
            return None
        f = self.rng.choice(factors)
        if op == "group":
            return make_step(op, {"loops": [loop.name, self.rng.choice(partners)], "G": f})
        return make_step(op, {"loop": loop.name, "B": f})

    def _schedule(self, nest: Nest) -> Step | None:
        op = self.rng.choice(SCHEDULE_OPS)
        names = nest.names
        if op == "interchange":
            return make_step(op, {"loops": self.rng.sample(names, 2)})
        if op == "fuse":
            i = self.rng.randrange(len(names) - 1)
            return make_step(op, {"loops": names[i : i + 2]})
        if op == "vectorize":
            return make_step(op, {"loop": names[-1]})
        loop = self.rng.choice(nest.loops)
        if op == "split":
            factors = [f for f in FACTORS if f < loop.extent and loop.extent % f == 0]
            return make_step(op, {"loop": loop.name, "factor": self.rng.choice(factors)}) if factors else None
        return make_step(op, {"loop": loop.name})


__all__ = ["SequenceSearch"]
