"""Chains of views, shares and reduces written as one einsum, staged as core.analysis.staging plans.

Written one line per primitive, a share that no reduce follows at once materialises its
product ([N, C_out, C_in, H, W] for a share over C_in with an output axis), and an expand,
split or merge between a share and the reduce of C_in copies that product again: such
modules trained 10-170x slower than the convolution they replace, where TVM's kernel inlines
the product into the reduction and sums what it can first (core.analysis.staging).

Here such a chain is read as what it computes: the chain's input times the shares' weights,
every axis of every factor named by a *letter*, summed over the reduced letters: one einsum.
An axis of a value is a group of letters (flattened row-major). Views relabel: split and merge
regroup letters (splitting one where a boundary needs it), expand adds a letter that no
factor holds (a broadcast, never materialised; summed, it multiplies by its size), shift rolls
every factor holding its letter, stride slices it, unfold opens padded windows on it. The
weights come first in the einsum, so torch, which contracts left to right, combines them
(no batch, no pixels) before they meet the activation, which it then reads once.

Where the activation is read through a roll, a window or a stride, the chain is one reduction
in core.analysis.staging's terms (its root the chain's input, its weight all the weights) and
follows that plan: the reduction letters the plan sums first are summed on the input, with the
weights when the plan puts them there, and the views replay on the smaller result (Syno's
rfactor: C*K*H -> C*H + K*H for a window). Without such views one einsum already does what
a first stage would, since torch sums an operand's own letters before contracting it.

A chain is a run of such steps, each value read only by the next; it is written this way
where one of its values is larger than both its input and its output (a product the step by
step module would materialise). A view this model cannot express (a roll or window of a
merged axis, a window on a broadcast or a weight, a split across letters) ends a chain there.
Importing this module imports neither torch nor TVM."""

from __future__ import annotations

import string
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from math import prod

from ..analysis import staging
from ..analysis.indexing import Coord
from ..ir.primitives import Expand, Group, Merge, Reduce, Share, Shift, Split, Stride, Unfold
from .torch_ops import ints, view
from .torch_plan import BATCH_NAME, Plan, Step

CHAINED = (Share, Reduce, Group, Split, Merge, Expand, Shift, Stride, Unfold)
_CHARS = [c for c in string.ascii_lowercase + string.ascii_uppercase if c != BATCH_NAME]


@dataclass(frozen=True)
class Letter:
    char: str
    size: int


_BATCH = Letter(BATCH_NAME, 1)  # the activation's first axis; size 1: staging counts work per sample


@dataclass(frozen=True)
class Op:
    """A view applied to every factor holding `letter`, which it replaces by `into`: split (outer,
    inner), roll (the rolled letter; by `amount`), unfold (window, position; window size
    `amount`), stride (the kept letter; step `amount`). A letter is replaced once, so replaying
    the ops on a factor that already went through some of them repeats none."""

    kind: str
    letter: Letter
    into: tuple[Letter, ...]
    amount: int = 0


@dataclass(frozen=True)
class Factor:
    """A tensor of the product: the chain's input (`batched`) or a share's weight, its axes as
    groups of letters. The ops that apply to it are those of the letters it holds: a weight
    holds letters of the value when its share came, which no earlier op consumed."""

    source: str
    axes: tuple[tuple[Letter, ...], ...]
    batched: bool = False


@dataclass(frozen=True)
class FirstStage:
    """What core.analysis.staging's plan sums on the chain's input before its views replay:
    the letters, whether the weights multiply there, and the letters the partial sum keeps
    (batch first)."""

    early: frozenset[Letter]
    weight_first: bool
    kept: tuple[Letter, ...]


@dataclass(frozen=True)
class EinsumChain:
    steps: tuple[Step, ...]
    factors: tuple[Factor, ...]  # the weights in chain order, the activation last
    ops: tuple[Op, ...]
    out: tuple[tuple[Letter, ...], ...]  # the result's axes (batch excluded)
    reduced: tuple[tuple[Letter, ...], ...]  # the groups summed, in order
    first: FirstStage | None = None

    @property
    def result(self) -> str:
        return self.steps[-1].result

    @property
    def source(self) -> str:
        return self.steps[0].args[0]


class _Unsupported(Exception):
    """A step the letter model cannot express: the chain ends before it."""


@dataclass
class _Walk:
    """The chain's value so far: its axes as letter groups (batch excluded), the factors (the
    activation last, its batch axis first) and the ops."""

    chars: Iterator[str]
    axes: list[list[Letter]]
    factors: list[Factor]
    ops: list[Op] = field(default_factory=list)
    reduced: list[tuple[Letter, ...]] = field(default_factory=list)

    @classmethod
    def start(cls, source: str, shape: tuple[int, ...]) -> _Walk:
        chars = iter(_CHARS)
        axes = [[Letter(next(chars), s)] for s in shape]
        return cls(chars, axes, [Factor(source, ((_BATCH,), *(tuple(a) for a in axes)), batched=True)])

    def copy(self) -> _Walk:
        return _Walk(self.chars, [list(a) for a in self.axes], list(self.factors), list(self.ops), list(self.reduced))

    def letter(self, size: int) -> Letter:
        char = next(self.chars, None)
        if char is None:
            raise _Unsupported("more letters than einsum has")
        return Letter(char, size)

    def holders(self, letter: Letter) -> list[Factor]:
        return [f for f in self.factors if letter in _replay(f, self.ops)[1]]

    def single(self, d: int) -> Letter:
        if len(self.axes[d]) != 1:
            raise _Unsupported("a roll, window or stride of a merged axis")
        return self.axes[d][0]

    def step(self, step: Step) -> None:
        prim = step.prim
        if isinstance(prim, Share):
            self._share(step, prim)
            return
        if isinstance(prim, Expand):  # its dim may be one past the last axis
            at = prim.params["dim"] % (len(step.ins[0]) + 1)
            self.axes.insert(at, [self.letter(step.out_shape[at])])
            return
        d = prim.axis(step.ins[0])
        if isinstance(prim, Reduce):
            self.reduced.append(tuple(self.axes.pop(d)))
        elif isinstance(prim, Merge):
            self.axes[d : d + 2] = [self.axes[d] + self.axes[d + 1]]
        elif isinstance(prim, (Group, Split)):
            self.axes[d : d + 1] = self._split(self.axes[d], step.out_shape[d])
        elif isinstance(prim, Shift):
            letter = self.single(d)
            self.axes[d] = [self.letter(letter.size)]
            self.ops.append(Op("roll", letter, tuple(self.axes[d]), prim.params["amount"]))
        elif isinstance(prim, Stride):
            letter, kept = self.single(d), self.letter(step.out_shape[d])
            self.ops.append(Op("stride", letter, (kept,), step.in_shapes[0][d] // step.out_shape[d]))
            self.axes[d] = [kept]
        else:
            self._unfold(step, d)

    def _share(self, step: Step, prim: Share) -> None:
        """A weight factor over the shared axes (and a new leading axis), then the absorbed reduces."""
        assert step.weight is not None  # make_plan gives every share its weight
        lead = [[self.letter(step.weight.shape[0])]] if prim.size("out") is not None else []
        shared = [*lead, *(self.axes[d] for d in prim.shared_axes(step.ins[0]))]
        weight = Factor(f"self.{step.weight.name}", tuple(tuple(a) for a in shared))
        self.factors.insert(len(self.factors) - 1, weight)
        self.axes = [*lead, *self.axes]
        for d in step.reduced:
            self.reduced.append(tuple(self.axes.pop(d)))

    def _split(self, group: list[Letter], outer: int) -> list[list[Letter]]:
        """The group as (outer, inner) groups, splitting the letter that the boundary falls in."""
        size = 1
        for i, letter in enumerate(group):
            if size == outer:
                return [group[:i], group[i:]]
            part = outer // size
            if outer % size == 0 and 1 < part < letter.size and letter.size % part == 0:
                head, tail = self.letter(part), self.letter(letter.size // part)
                self.ops.append(Op("split", letter, (head, tail)))
                return [[*group[:i], head], [tail, *group[i + 1 :]]]
            size *= letter.size
        if size == outer:
            return [group, []]
        raise _Unsupported("a split across letters")

    def _unfold(self, step: Step, d: int) -> None:
        letter = self.single(d)
        if [f.batched for f in self.holders(letter)] != [True]:
            raise _Unsupported("a window on a broadcast or a weight")
        first = step.ins[0].spatial_dims[0]
        window, position = self.letter(step.out_shape[first]), self.letter(letter.size)
        self.ops.append(Op("unfold", letter, (window, position), window.size))
        self.axes[d] = [position]
        self.axes.insert(first, [window])

    def chain(self, steps: list[Step]) -> EinsumChain:
        return EinsumChain(
            tuple(steps),
            tuple(self.factors),
            tuple(self.ops),
            tuple(tuple(a) for a in self.axes),
            tuple(self.reduced),
        )


def einsum_chains(plan: Plan, taken: set[str]) -> dict[str, EinsumChain]:
    """The chains worth one einsum, by the node of their first step; `taken`: nodes that other
    torch layers (convolutions, window products) already stand for."""
    readers: dict[str, list[Step]] = defaultdict(list)
    for s in plan.steps:
        for a in s.args:
            readers[a].append(s)

    def next_step(step: Step) -> Step | None:
        after = readers[step.result]
        if step.result == plan.result or len(after) != 1:
            return None
        nxt = after[0]
        return nxt if nxt.node not in taken and isinstance(nxt.prim, CHAINED) else None

    found: dict[str, EinsumChain] = {}
    done: set[str] = set()
    for step in plan.steps:
        if step.node in done or step.node in taken or not isinstance(step.prim, CHAINED):
            continue
        run = [step]
        while (nxt := next_step(run[-1])) is not None:
            run.append(nxt)
        done.update(s.node for s in run)
        for part in _parts(run):
            part = replace(part, first=_first_stage(part))
            if len(part.steps) > 1 and _materialises(part):
                found[part.steps[0].node] = part
    return found


def _parts(run: list[Step]) -> list[EinsumChain]:
    """The run cut where a step cannot be expressed (that step stays a line of its own)."""
    parts, start = [], 0
    while start < len(run):
        walk, end = _Walk.start(run[start].args[0], run[start].in_shapes[0]), start
        for s in run[start:]:
            trial = walk.copy()
            try:
                trial.step(s)
            except _Unsupported:
                break
            walk, end = trial, end + 1
        if end > start:
            parts.append(walk.chain(run[start:end]))
        start = end + 1
    return parts


def _materialises(chain: EinsumChain) -> bool:
    """A value inside the chain is larger than its ends and than the activation as the einsum
    reads it (windows included): a product or copy that the einsum avoids."""
    steps = chain.steps
    read = _replay(_read(chain), chain.ops)[1][1:]
    ends = max(prod(steps[0].in_shapes[0]), prod(steps[-1].out_shape), prod(letter.size for letter in read))
    return any(prod(s.out_shape) > ends for s in steps[:-1])


def _read(chain: EinsumChain) -> Factor:
    """The activation the last einsum reads through the views: the input, or the first stage's sum."""
    if chain.first is None:
        return chain.factors[-1]
    return Factor(f"rf_{chain.result}", tuple((letter,) for letter in chain.first.kept), batched=True)


# -- writing it -----------------------------------------------------------------------------------
def _replay(factor: Factor, ops: Sequence[Op]) -> tuple[str, list[Letter], list[Op]]:
    """The factor as an expression with one letter per axis after the ops that apply to it:
    (expression, its letters, those ops)."""
    expr = factor.source
    layout = [letter for group in factor.axes for letter in group]
    if any(len(g) != 1 for g in factor.axes):
        expr += f".reshape({ints([letter.size for letter in layout])})"  # a weight: no batch axis
    applied = []
    for op in ops:
        if op.letter not in layout:
            continue
        applied.append(op)
        i = layout.index(op.letter)
        if op.kind == "split":
            expr += f".unflatten({i}, ({op.into[0].size}, {op.into[1].size}))"
            layout[i : i + 1] = list(op.into)
        elif op.kind == "roll":
            expr = f"torch.roll({expr}, {op.amount}, {i})"
            layout[i] = op.into[0]
        elif op.kind == "stride":
            expr += f"[{', '.join([':'] * i + [f'::{op.amount}'])}]"
            layout[i] = op.into[0]
        else:  # unfold: window k of position h reads h + k - K//2, zeros outside; the window axis last
            k = op.amount
            pad = [0, 0] * (len(layout) - 1 - i) + [k // 2, k - 1 - k // 2]
            expr = f"nn.functional.pad({expr}, ({ints(pad)})).unfold({i}, {k}, 1)"
            layout[i : i + 1] = [op.into[1]]
            layout.append(op.into[0])
    return expr, layout, applied


def _einsum(operands: list[tuple[str, list[Letter]]], out: Iterable[Letter]) -> str:
    inputs = ",".join("".join(letter.char for letter in layout) for _, layout in operands)
    names = ", ".join(expr for expr, _ in operands)
    return f'torch.einsum("{inputs}->{"".join(letter.char for letter in out)}", {names})'


def lines(chain: EinsumChain) -> list[tuple[str, str]]:
    """(result, expression) of each line: the einsum, after a first stage where the plan has one."""
    weights = [f for f in chain.factors if not f.batched]
    written: list[tuple[str, str]] = []
    first, activation = chain.first, _read(chain)
    if first is not None:
        firsts = [_replay(w, chain.ops)[:2] for w in weights] if first.weight_first else []
        root = chain.factors[-1]
        layout = [letter for group in root.axes for letter in group]
        written.append((activation.source, _einsum([*firsts, (root.source, layout)], first.kept)))
        weights = [] if first.weight_first else weights
    operands = [_replay(f, chain.ops)[:2] for f in (*weights, activation)]
    written.append((chain.result, _finish(chain, operands)))
    return written


def _finish(chain: EinsumChain, operands: list[tuple[str, list[Letter]]]) -> str:
    """The einsum over the held letters, then the broadcast letters (held by no factor) put in
    and the summed ones counted."""
    held = {letter for f in chain.factors for letter in _replay(f, chain.ops)[1]}
    flat = [letter for group in chain.out for letter in group]
    expr = _einsum(operands, [_BATCH, *(letter for letter in flat if letter in held)])
    scale = prod(letter.size for group in chain.reduced for letter in group if letter not in held)
    if scale != 1:
        expr = f"({expr} * {scale})"
    if any(letter not in held for letter in flat):
        ones = ints([letter.size if letter in held else 1 for letter in flat])
        expr = f"{expr}.reshape({BATCH_NAME}, {ones}).expand({BATCH_NAME}, {ints([s.size for s in flat])})"
    return view(expr, [letter.size for letter in flat], [prod(letter.size for letter in g) for g in chain.out])


def _first_stage(chain: EinsumChain) -> FirstStage | None:
    """The first stage core.analysis.staging plans for the chain's reduction, where the
    activation is read through a roll, window or stride; None for one stage."""
    if all(op.kind == "split" for op in _replay(chain.factors[-1], chain.ops)[2]):
        return None
    plan = staging.plan(_reduction(chain))
    if not plan.early:
        return None
    early = frozenset(chain.reduced[j][0] for j in plan.early)
    kept = [letter for group in chain.factors[-1].axes for letter in group if letter not in early]
    if plan.weight_first:  # and the weights' letters the result keeps (those it sums are summed there)
        outputs = {letter for group in chain.out for letter in group}
        weights = [f for f in chain.factors if not f.batched]
        kept += [letter for w in weights for letter in _replay(w, chain.ops)[1] if letter in outputs]
    return FirstStage(early, plan.weight_first, tuple(dict.fromkeys(kept)))


def _reduction(chain: EinsumChain) -> staging.Reduction:
    """The chain as one reduction of its input (the root) times one weight (all the weights):
    output variables o<i> for the result's axes (the batch o0), r<j> for the groups summed. A
    root letter no view touches and that is one variable's whole group is that variable; any
    other root axis is a compound of the variables its letters became. Broadcast letters count
    as size 1: the einsum never computes over them."""
    out = [(_BATCH,), *chain.out]
    variable = {letter: f"o{i}" for i, group in enumerate(out) for letter in group}
    variable |= {letter: f"r{j}" for j, group in enumerate(chain.reduced) for letter in group}
    derived = {op.letter: op.into for op in chain.ops}

    def reach(letter: Letter) -> set[Letter]:
        found, todo = {letter}, [letter]
        while todo:
            for d in derived.get(todo.pop(), ()):
                found.add(d)
                todo.append(d)
        return found

    held = {letter for f in chain.factors for letter in _replay(f, chain.ops)[1]}
    alone = {group[0] for group in [*out, *chain.reduced] if len(group) == 1}
    root = [letter for group in chain.factors[-1].axes for letter in group]
    coords = [
        Coord.variable(variable[letter])
        if letter in alone and letter not in derived
        else Coord(None, frozenset(variable[d] for d in reach(letter) if d in variable))
        for letter in root
    ]
    unfolded = {op.letter for op in chain.ops if op.kind == "unfold"}
    weights = [f for f in chain.factors if not f.batched]
    uses = frozenset(variable[letter] for w in weights for letter in _replay(w, chain.ops)[1])

    def size(group: tuple[Letter, ...]) -> int:  # a broadcast letter is never computed over
        return prod(letter.size for letter in group if letter in held)

    return staging.Reduction(
        tuple(size(g) for g in out),
        tuple(size(g) for g in chain.reduced),
        tuple(letter.size for letter in root),
        tuple(bool(reach(letter) & unfolded) for letter in root),
        tuple(coords),
        uses if weights else None,
    )
