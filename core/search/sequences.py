"""NAS-PTE's search: random transformation sequences on the template's loop nest.

Each sample is a random mix of architecture-changing steps (bottleneck, group)
and meaning-preserving ones (every other step the editor offers: reorder, interchange,
split, tile, fuse, unroll, vectorize, parallel, prefetch, peel), drawn one at a time on the
current program, on one part after a peel or on all, so that every step applies;
a sequence whose steps break a dependence is rejected (counted "illegal").

The nests' sums are float32, and the search reassociates them as NAS-PTE does (its legal
reorders include those among the reduction loops, as TVM's own schedules move them): each
sampled sequence says `reassociate: true`, so a reorder of the reduction loops is legal and
its step's verdict says the sum was reordered; only parallel and vectorize on a loop that
carries the accumulation stay illegal. `reassociate=False` asks for the strict order. The
resulting operator goes through the common screening (valid, in budget, not
seen before) and, when a `screen` is given (core.train.capacity.CapacityJudge), through
Fisher Potential against the original network, NAS-PTE's filter. The sequence
travels with the candidate (info["sequence"]) so its schedule can be compiled
and measured for the survivors."""

from __future__ import annotations

from collections.abc import Callable

from core.errors import TesseraError

from ..codegen.loopnest_ir import checked_sequence, result_operator
from ..ir.graph import OperatorGraph
from ..ir.loopnest import BASES, LoopNestError
from ..ir.sequence import (
    ARCHITECTURE_OPS,
    MEANING_PRESERVING_OPS,
    Sequence,
    apply_step,
    make_step,
    sequence_document,
    start,
)
from .base import Budget, Candidate, SearchError, Strategy
from .sequence_space import options

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
        reassociate: bool = True,
    ):
        super().__init__(template, budget, seed)
        if nest not in BASES:
            raise SearchError(f"unknown nest {nest!r} (known: {', '.join(BASES)})")
        sizes = {k: v for k, v in self.limits.bindings.items() if k in BASES[nest].variables}
        why = "float32 sums reassociated, as NAS-PTE's search does" if reassociate else "sums in the nest's order"
        self.base = Sequence(nest, (), sizes, "sequence-sample", f"sampled by the sequence search; {why}", reassociate)
        try:
            self.start, _ = start(self.base)
        except LoopNestError as e:
            raise SearchError(f"template {template.name or '?'} cannot start a {nest} nest: {e}") from None
        self.architecture_steps, self.schedule_steps = architecture_steps, schedule_steps
        self.screen = screen
        self.stats.update(illegal=0, fisher_rejected=0, unfit=0)

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
        try:
            verdict = self.screen(graph)
        except TesseraError:  # it fits none of the network's layers (e.g. strips of rows the size of one image)
            self.stats["unfit"] += 1
            return None
        candidate.info["fisher"] = verdict
        if not verdict["passes"]:
            self.stats["fisher_rejected"] += 1
            return None
        return candidate

    # -- sampling -----------------------------------------------------------------------
    def sample(self) -> Sequence:
        """A random sequence: architecture-changing and meaning-preserving steps in random
        order, each drawn from every step of its kind (core.search.sequence_space) on one
        part of the program or on all of them, and kept only when it applies."""
        kinds = [ARCHITECTURE_OPS] * self.rng.randint(*self.architecture_steps) + [
            MEANING_PRESERVING_OPS
        ] * self.rng.randint(*self.schedule_steps)
        self.rng.shuffle(kinds)
        program, steps = self.start, []
        for ops in kinds:
            for _ in range(ATTEMPTS_PER_STEP):
                parts = program.parts
                part = None if len(parts) == 1 else self.rng.choice([None, *range(len(parts))])
                op = self.rng.choice(ops)
                choices = options(parts[part or 0], op)
                if not choices:
                    continue
                try:
                    step = make_step(op, self.rng.choice(choices), part)
                    program, _ = apply_step(program, step)
                except TesseraError:
                    continue
                steps.append(step)
                break
        return self.base.with_steps(steps)


__all__ = ["SequenceSearch"]
