"""Legality of transformation steps, each with the reason a person can act on.

Meaning-preserving steps are checked against the nest's data dependences with
the polyhedral rule: a step is legal iff every dependence i -> j still runs
i before j, i.e. its direction vector stays lexicographically positive. The
nests here have one statement, `O[..] += W[..] * I[..]`, so the dependences are
the accumulations into one output element: iterations that differ only in the
reduction iterators, ordered as the nest runs them. The dependence carried by a
loop has direction 0 on the loops outside it, + on it, and * on the reduction
loops inside it; a reorder that puts a * (or a -) before the + reverses it.
With `reassociate`, sums may be reordered and these dependences constrain only
parallel and vectorize (iterations adding into one element must not race); a step that
reorders a sum is then legal and its report says which accumulation it reorders (floating-point
results may differ in the last bits). Prefetch only reads ahead and is always legal.

Architecture-changing steps (bottleneck, group) are legal when their sizes
divide, and then when the network keeps its representational capacity: the
Fisher Potential of a backbone with the operator must not fall below the
original's (core.train.capacity, which imports torch and runs in worker processes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..ir.loopnest import REDUCTION_ITERATORS, DivisibilityError, Event, Loop, LoopNestError, Nest, Piece, Program
from ..ir.sequence import Sequence, Step, apply_step, start

LEGAL, ILLEGAL, ERROR = "legal", "illegal", "error"


@dataclass(frozen=True)
class Dependence:
    """The accumulation dependence carried by one loop: direction per loop ('0', '+', '*')."""

    array: str  # the output access, e.g. O[co, oh, ow]
    carrier: str  # the loop that carries it
    loops: tuple[str, ...]
    direction: tuple[str, ...]

    def text(self) -> str:
        return f"({', '.join(self.direction)}) over ({', '.join(self.loops)})"


@dataclass(frozen=True)
class StepReport:
    index: int  # 0-based position in the sequence
    step: Step
    status: str  # legal, illegal (applied, but breaks a rule) or error (cannot be applied)
    kind: str  # dependence, divisibility, structure, or "" when legal
    message: str
    before: Program
    after: Program | None
    events: tuple[Event, ...] = ()


@dataclass
class SequenceReport:
    sequence: Sequence
    start: Program
    start_events: list[Event]
    steps: list[StepReport] = field(default_factory=list)
    #: why the final program's operator cannot be built ('' if it can, or was not asked:
    #: core.codegen.loopnest_ir.checked_sequence asks)
    operator_problem: str = ""

    @property
    def final(self) -> Program | None:
        """The program after every step, or None when a step could not be applied."""
        if any(s.status == ERROR for s in self.steps):
            return None
        return self.steps[-1].after if self.steps else self.start

    @property
    def legal(self) -> bool:
        return all(s.status == LEGAL for s in self.steps) and not self.operator_problem

    @property
    def events(self) -> list[Event]:
        return [e for s in self.steps for e in s.events]

    def problems(self) -> list[str]:
        steps = [f"step {s.index + 1} ({s.status}): {s.message}" for s in self.steps if s.status != LEGAL]
        return steps + ([f"the resulting operator: {self.operator_problem}"] if self.operator_problem else [])


def check_sequence(seq: Sequence, bindings: Mapping[str, int] | None = None) -> SequenceReport:
    """Apply every step and judge it; stops at the first step that cannot be applied.
    Raises LoopNestError only if the starting nest itself cannot be built."""
    program, events = start(seq, bindings)
    report = SequenceReport(seq, program, events)
    for i, step in enumerate(seq.steps):
        try:
            after, events = apply_step(program, step)
        except DivisibilityError as e:
            report.steps.append(StepReport(i, step, ERROR, "divisibility", str(e), program, None))
            break
        except LoopNestError as e:
            report.steps.append(StepReport(i, step, ERROR, "structure", str(e), program, None))
            break
        problem = step_violation(program, after, step, seq.reassociate)
        status, kind = (ILLEGAL, "dependence") if problem else (LEGAL, "")
        reason = problem or _legal_reason(program, after, step, seq.reassociate)
        report.steps.append(StepReport(i, step, status, kind, reason, program, after, tuple(events)))
        program = after
    return report


def _legal_reason(before: Program, after: Program, step: Step, reassociate: bool) -> str:
    if step.changes_architecture:
        return "sizes divide; capacity is judged by Fisher Potential"
    if step.op in ("parallel", "vectorize"):
        return "the loop carries no dependence"
    if step.op == "prefetch":
        return "it only reads ahead into the cache: no value and no order changes"
    reordered = reassociate and step.op != "peel" and reordered_sum(before, after)  # a peel makes new parts
    if reordered:
        return (
            f"it reorders the sum (it would reverse {reordered}); legal because the sequence reassociates "
            "sums (reassociate: floating-point results may differ in the last bits)"
        )
    return "every dependence keeps its order"


def step_violation(before: Program, after: Program, step: Step, reassociate: bool) -> str | None:
    """Why a meaning-preserving step breaks a dependence, or None."""
    if step.changes_architecture or step.op in ("peel", "prefetch"):
        return None  # peeling keeps the order: part 0 runs entirely before part 1
    if step.op in ("parallel", "vectorize"):
        for new in after.parts:
            loop = new.loop(step.params["loop"], step.text())
            if carries(loop):
                dep = next(d for d in dependences(new) if d.carrier == loop.name)
                verb = "in vector lanes" if step.op == "vectorize" else "on several cores"
                return (
                    f"{step.text()} would run iterations that add into the same {dep.array} at once "
                    f"({verb}): loop {loop.name} carries the accumulation dependence {dep.text()}"
                )
        return None
    problem = None if reassociate else reordered_sum(before, after)
    return f"{step.text()} would reverse {problem}" if problem else None


def reordered_sum(before: Program, after: Program) -> str | None:
    """The accumulation dependence a step reverses, on the first part where it does, or None."""
    for new in after.parts:
        problem = reversed_dependence(before.part_of(new.path), new)
        if problem:
            return problem
    return None


def carries(loop: Loop) -> bool:
    """Whether the loop carries an accumulation dependence: it runs over a reduction iterator."""
    return any(_free(p) for p in loop.pieces)


def _free(piece: Piece) -> bool:
    """A reduction piece that takes more than one value (direction * inside a dependence)."""
    return piece.iterator in REDUCTION_ITERATORS and piece.extent > 1


def dependences(nest: Nest) -> list[Dependence]:
    """The accumulation dependences of a nest, one per loop that carries one, outermost first."""
    array = nest.comp.accesses().out
    names = tuple(nest.names)
    deps = []
    for i, loop in enumerate(nest.loops):
        if carries(loop):
            direction = tuple(
                "0" if j < i else "+" if j == i else ("*" if carries(l) else "0") for j, l in enumerate(nest.loops)
            )
            deps.append(Dependence(array, loop.name, names, direction))
    return deps


def reversed_dependence(old: Nest, new: Nest) -> str | None:
    """Compare the two orders piece by piece: every piece of the new nest refines one of the old.

    A dependence carried by piece p has '<' on p, '=' on the pieces before p (old order) and
    '*' on the reduction pieces after it; it is reversed when, in the new order, a '*'
    comes before p."""
    atoms = [p for l in new.loops for p in l.pieces]
    new_index = {id(a): k for k, a in enumerate(atoms)}
    owner_new = {id(a): l.name for l in new.loops for a in l.pieces}
    old_order, owner_old = [], {}
    for loop in old.loops:
        for a in (a for q in loop.pieces for a in _refining(q, atoms)):
            old_order.append(a)
            owner_old[id(a)] = loop.name
    for k, carrier in enumerate(old_order):
        if not _free(carrier):
            continue
        free = [a for a in old_order[k + 1 :] if _free(a)]
        first = min(free, key=lambda a: new_index[id(a)], default=None)
        if first is not None and new_index[id(first)] < new_index[id(carrier)]:
            dep = next(d for d in dependences(old) if d.carrier == owner_old[id(carrier)])
            moved = _new_direction(new, carrier, old_order[k + 1 :])
            return (
                f"the accumulation dependence on {dep.array} carried by loop {dep.carrier}: "
                f"its direction {dep.text()} becomes ({', '.join(moved)}) over ({', '.join(new.names)}); "
                f"{owner_new[id(first)]} would vary ahead of {owner_new[id(carrier)]}"
            )
    return None


def _refining(piece: Piece, atoms: list[Piece]) -> list[Piece]:
    """The new pieces a piece of the old nest was split into, outermost first."""
    inside = [
        a for a in atoms if a.iterator == piece.iterator and piece.stride <= a.stride < piece.stride * piece.extent
    ]
    return sorted(inside, key=lambda a: -a.stride)


def _new_direction(new: Nest, carrier: Piece, after: list[Piece]) -> list[str]:
    free = {id(a) for a in after if _free(a)}
    out = []
    for loop in new.loops:
        signs = ["+" if a is carrier else "*" if id(a) in free else "0" for a in loop.pieces]
        out.append(next((s for s in signs if s != "0"), "0"))
    return out


__all__ = [
    "ERROR",
    "ILLEGAL",
    "LEGAL",
    "Dependence",
    "SequenceReport",
    "StepReport",
    "carries",
    "check_sequence",
    "dependences",
    "reordered_sum",
    "reversed_dependence",
    "step_violation",
]
