"""Transformation sequences: steps on a loop nest, their versioned JSON format, and applying them.

A sequence names a starting nest (conv2d, grouped_conv2d, dense), default sizes
and the steps. Files are `{"format": "tessera.sequence", "version": 1, ...}`; version 2
adds the `prefetch` step, and a sequence is written in the oldest version that holds its
steps (so one without prefetch still opens in a Tessera that reads only version 1). Files are
read like operator files: parsed, checked field by field, never executed; every
error names the file and the step. Loop names must be identifiers and factors
positive integers or size expressions ('2', 'G', 'C_out/2'), evaluated with the
bindings when the sequence is applied."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.errors import shorten, shown

from ..atomic import write_text_atomically
from .errors import BindingError, FormatError, SizeError
from .loopnest import BASES, Event, Factor, LoopNestError, Nest, Program, initial_nest
from .serialize import check_header, load_json, read_json, refuse_unknown_fields
from .symbolic import MAX_SIZE, Size, parse_size

FORMAT = "tessera.sequence"
VERSION = 2  # the newest this Tessera writes
#: the version of the format that introduced each step added after version 1
STEP_VERSION = {"prefetch": 2}

#: op -> its parameters, each "loop" (a loop name), "loops" (two or more), "pair" (exactly two),
#: "size" (a factor) or "sizes" (two factors)
STEP_PARAMS: dict[str, dict[str, str]] = {
    "reorder": {"loops": "loops"},
    "interchange": {"loops": "pair"},
    "split": {"loop": "loop", "factor": "size"},
    "tile": {"loops": "pair", "factors": "sizes"},
    "fuse": {"loops": "pair"},
    "unroll": {"loop": "loop"},
    "vectorize": {"loop": "loop"},
    "parallel": {"loop": "loop"},
    "prefetch": {"loop": "loop"},
    "peel": {"loop": "loop", "at": "size"},
    "bottleneck": {"loop": "loop", "B": "size"},
    "group": {"loops": "pair", "G": "size"},
}
ARCHITECTURE_OPS = ("bottleneck", "group")
MEANING_PRESERVING_OPS = tuple(op for op in STEP_PARAMS if op not in ARCHITECTURE_OPS)
STEP_DOCS = {
    "reorder": "put the named loops in this order, in the positions they occupy together",
    "interchange": "swap two loops",
    "split": "strip-mine a loop into outer and inner loops (factor = inner iterations)",
    "tile": "split two loops and put both outer loops before both inner ones",
    "fuse": "merge two adjacent loops into one",
    "unroll": "unroll a loop",
    "vectorize": "run the innermost loop as vector instructions",
    "parallel": "run a loop's iterations on several cores",
    "prefetch": "fetch into cache the input the next iteration reads",
    "peel": "split the output channels at `at` into two parts with nests of their own",
    "bottleneck": "visit one index in B of the loop's iterator (changes the architecture)",
    "group": "keep only the diagonal blocks of two loops tiled by G (changes the architecture)",
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Step:
    op: str
    params: Mapping[str, Any]
    part: int | None = None  # None: every part

    @property
    def changes_architecture(self) -> bool:
        return self.op in ARCHITECTURE_OPS

    def text(self) -> str:
        """'split(co, 8)', 'group(co, ci, 2)', 'reorder(kw, co) @part 1'."""
        args: list[str] = []
        for name, kind in STEP_PARAMS[self.op].items():
            value = self.params[name]
            args += [str(v) for v in value] if kind in ("loops", "pair", "sizes") else [str(value)]
        where = f" @part {self.part}" if self.part is not None else ""
        return f"{self.op}({', '.join(args)}){where}"

    def to_json(self) -> dict:
        doc = {"op": self.op, **{k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in self.params.items()}}
        if self.part is not None:
            doc["part"] = self.part
        return doc


@dataclass(frozen=True)
class Sequence:
    nest: str = "conv2d"
    steps: tuple[Step, ...] = ()
    bindings: Mapping[str, int] = field(default_factory=dict)
    name: str = ""
    description: str = ""
    reassociate: bool = False  # True: sums may be reordered (accumulation order is not a dependence)

    @property
    def base(self):
        return BASES[self.nest]

    def with_steps(self, steps) -> Sequence:
        return replace(self, steps=tuple(steps))

    def variables(self) -> set[str]:
        """The size variables it has: its nest's, its own bindings' and those its steps'
        factors name (a group by G, a split by F, ...)."""
        names = set(self.base.variables) | set(self.bindings)
        for step in self.steps:
            for name, kind in STEP_PARAMS[step.op].items():
                values = step.params[name] if kind == "sizes" else [step.params[name]] if kind == "size" else []
                names |= {v for value in values for v in parse_size(str(value)).variables}
        return names


# -- building and checking steps -----------------------------------------------------------
def make_step(op: str, params: Mapping[str, Any] | None = None, part: int | None = None) -> Step:
    """A checked step (FormatError naming the parameter otherwise)."""
    return _step({"op": op, **(params or {}), **({} if part is None else {"part": part})}, "step")


def _step(doc: Any, where: str) -> Step:
    if not isinstance(doc, dict):
        raise FormatError(f"{where}: expected an object")
    op = doc.get("op")
    if not isinstance(op, str) or op not in STEP_PARAMS:
        raise FormatError(f"{where}: unknown op {shown(op)} (known: {', '.join(STEP_PARAMS)})")
    spec = STEP_PARAMS[op]
    unknown = sorted(set(doc) - set(spec) - {"op", "part"})
    if unknown:
        raise FormatError(
            f"{where} ({op}): unknown field(s) {shorten(', '.join(unknown))} (expected {', '.join(spec)})"
        )
    params: dict[str, Any] = {}
    for name, kind in spec.items():
        if name not in doc:
            raise FormatError(f"{where} ({op}): missing {name!r}")
        params[name] = _param(doc[name], kind, f"{where} ({op}).{name}")
    part = doc.get("part")
    if part is not None and (not isinstance(part, int) or isinstance(part, bool) or part < 0):
        raise FormatError(f"{where} ({op}).part: must be a part number 0, 1, ..., got {shown(part)}")
    return Step(op, params, part)


def _param(value: Any, kind: str, where: str):
    if kind == "loop":
        if not isinstance(value, str) or not _NAME.match(value):
            raise FormatError(f"{where}: expected a loop name such as 'co', got {shown(value)}")
        return value
    if kind in ("loops", "pair"):
        count = "two" if kind == "pair" else "two or more"
        if not isinstance(value, list) or len(value) < 2 or (kind == "pair" and len(value) != 2):
            raise FormatError(f"{where}: expected a list of {count} loop names, got {shown(value)}")
        return tuple(_param(v, "loop", f"{where}[{i}]") for i, v in enumerate(value))
    if kind == "sizes":
        if not isinstance(value, list) or len(value) != 2:
            raise FormatError(f"{where}: expected a list of two factors, got {shown(value)}")
        return tuple(_param(v, "size", f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_SIZE:
        return value
    if isinstance(value, str):
        try:
            parse_size(value)
        except SizeError as e:
            raise FormatError(f"{where}: {e}") from None
        return value
    raise FormatError(
        f"{where}: expected a positive integer or a size expression such as 'G' (numbers up to 2^31 - 1), "
        f"got {shown(value)}"
    )


# -- the document ----------------------------------------------------------------------------
def sequence_from_document(doc: Any, source: str = "<document>") -> Sequence:
    fail = check_header(doc, FORMAT, tuple(range(1, VERSION + 1)), source)
    refuse_unknown_fields(
        doc, {"format", "version", "name", "description", "nest", "bindings", "reassociate", "steps"}, fail
    )
    nest = doc.get("nest", "conv2d")
    if not isinstance(nest, str) or nest not in BASES:
        raise fail("nest", f"unknown nest {shown(nest)} (known: {', '.join(BASES)})")
    for key in ("name", "description"):
        if not isinstance(doc.get(key, ""), str):
            raise fail(key, "must be a string")
    reassociate = doc.get("reassociate", False)
    if not isinstance(reassociate, bool):
        raise fail("reassociate", f"must be true or false, got {shown(reassociate)}")
    bindings = doc.get("bindings", {})
    if not isinstance(bindings, dict):
        raise fail("bindings", "expected an object")
    for k, v in bindings.items():
        if not _NAME.match(str(k)):
            raise fail(f"bindings.{shorten(k)}", "not a variable name")
        if not isinstance(v, int) or isinstance(v, bool) or not 0 < v <= MAX_SIZE:
            raise fail(f"bindings.{shorten(k)}", f"must be a positive integer up to 2^31 - 1, got {shown(v)}")
    steps = doc.get("steps")
    if not isinstance(steps, list):
        raise fail("steps", "missing, or not a list")
    parsed = []
    for i, s in enumerate(steps):
        try:
            parsed.append(_step(s, f"steps[{i}]"))
        except FormatError as e:
            raise FormatError(f"{source}: {e}") from None
        if STEP_VERSION.get(parsed[-1].op, 1) > doc["version"]:
            raise fail(
                f"steps[{i}] ({parsed[-1].op})",
                f"this step came with version {STEP_VERSION[parsed[-1].op]} of the format, the file says "
                f"version {doc['version']}",
            )
    return Sequence(nest, tuple(parsed), dict(bindings), doc.get("name", ""), doc.get("description", ""), reassociate)


def parse_sequence(text: str, source: str = "<document>") -> Sequence:
    return sequence_from_document(load_json(text, source), source)


def load_sequence(path: str | Path) -> Sequence:
    return sequence_from_document(read_json(path), str(path))


def sequence_document(seq: Sequence) -> dict:
    version = max((STEP_VERSION.get(s.op, 1) for s in seq.steps), default=1)
    doc: dict[str, Any] = {"format": FORMAT, "version": version, "name": seq.name}
    if seq.description:
        doc["description"] = seq.description
    doc["nest"] = seq.nest
    doc["bindings"] = dict(seq.bindings)
    if seq.reassociate:
        doc["reassociate"] = True
    doc["steps"] = [s.to_json() for s in seq.steps]
    return doc


def save_sequence(seq: Sequence, path: str | Path) -> None:
    write_text_atomically(path, json.dumps(sequence_document(seq), indent=2, allow_nan=False) + "\n")


# -- applying ---------------------------------------------------------------------------------
def start(seq: Sequence, bindings: Mapping[str, int] | None = None) -> tuple[Program, list[Event]]:
    """The untransformed nest at the sequence's sizes (overridden by `bindings`), prelude applied."""
    values = {**seq.bindings, **(bindings or {})}
    base = seq.base
    program = Program(base.name, tuple(sorted(values.items())), (initial_nest(base, values),))
    events: list[Event] = []
    for op, params in base.prelude:
        program, more = apply_step(program, make_step(op, params), f"{base.name} ({op})")
        events += more
    return program, events


def apply_step(program: Program, step: Step, what: str | None = None) -> tuple[Program, list[Event]]:
    """The program after one step and the structural events for schedule replay.
    LoopNestError (DivisibilityError for sizes that do not divide) if it cannot be applied."""
    what = what or step.text()
    if step.part is not None and step.part >= len(program.parts):
        raise LoopNestError(
            f"{what}: there is no part {step.part} (the nest has {len(program.parts)} "
            f"part{'s' if len(program.parts) > 1 else ''}, numbered from 0)"
        )
    bindings = dict(program.bindings)
    parts: list[Nest] = []
    events: list[Event] = []
    for k, nest in enumerate(program.parts):
        if step.part is not None and k != step.part:
            parts.append(nest)
            continue
        where = f"{what} on part {k}" if len(program.parts) > 1 else what
        new, more = _apply(nest, step, bindings, where)
        parts += new
        events += more
    return Program(program.base, program.bindings, tuple(parts)), events


def _apply(nest: Nest, step: Step, bindings: Mapping[str, int], what: str) -> tuple[list[Nest], list[Event]]:
    p, op = step.params, step.op
    if op == "peel":
        return nest.peel(p["loop"], factor(p["at"], bindings, what).value, what)
    if op == "reorder":
        result = nest.reorder(list(p["loops"]), what)
    elif op == "interchange":
        a, b = p["loops"]
        result = nest.interchange(a, b, what)
    elif op == "split":
        result = nest.split(p["loop"], factor(p["factor"], bindings, what).value, what)
    elif op == "tile":
        (a, b), (fa, fb) = p["loops"], p["factors"]
        first, e1 = nest.split(a, factor(fa, bindings, what).value, what)
        second, e2 = first.split(b, factor(fb, bindings, what).value, what)
        (_, ao, ai, _), (_, bo, bi, _) = e1[0].args, e2[0].args
        tiled, e3 = second.reorder([ao, bo, ai, bi], what)
        result = tiled, e1 + e2 + e3
    elif op == "fuse":
        a, b = p["loops"]
        result = nest.fuse(a, b, what)
    elif op in ("unroll", "vectorize", "parallel"):
        result = nest.annotate(p["loop"], op, what)
    elif op == "prefetch":
        result = nest.prefetch(p["loop"], what)
    elif op == "bottleneck":
        result = nest.bottleneck(p["loop"], divisor(p["B"], bindings, what), what)
    else:  # group
        a, b = p["loops"]
        result = nest.group(a, b, divisor(p["G"], bindings, what), what)
    return [result[0]], result[1]


def factor(value: int | str, bindings: Mapping[str, int], what: str) -> Factor:
    """A step's factor at the given sizes: a positive whole number."""
    expr = parse_size(str(value))
    try:
        number = expr.to_int(bindings)
    except BindingError as e:
        raise LoopNestError(f"{what}: {e}") from None
    if number < 1:
        raise LoopNestError(f"{what}: {expr} = {number} is not a positive size")
    return Factor(expr, number)


def divisor(value: int | str, bindings: Mapping[str, int], what: str) -> Factor:
    """A factor the channels are divided by (a group count, a bottleneck): in the resulting
    operator it sits in a denominator, where only numbers and coefficients may (a tensor's own
    size there would make the operator's shapes depend on a division nothing guarantees)."""
    result = factor(value, bindings, what)
    blockers = (Size(1) / result.expr).divisor_blockers({})
    if blockers:
        raise LoopNestError(
            f"{what}: {result.expr} divides the channels, so it must be a number or a coefficient such as G; "
            f"{', '.join(blockers)} is a size of the tensor"
        )
    return result


def apply_sequence(seq: Sequence, bindings: Mapping[str, int] | None = None) -> Program:
    """The final program; raises on the first step that cannot be applied."""
    program, _ = start(seq, bindings)
    for i, step in enumerate(seq.steps):
        program, _ = apply_step(program, step, f"step {i + 1} {step.text()}")
    return program


# -- editing -----------------------------------------------------------------------------------
def suggest_step(op: str, nest: Nest) -> Step:
    """A step of kind `op` with parameters that fit `nest`, for an editor's "add step"."""
    loops = nest.loops
    whole = [l for l in loops if len(l.pieces) == 1]
    pairs = [(a, b) for a, b in itertools.pairwise(loops) if a.reduction == b.reduction]

    def over(*iterators):
        return next((l.name for l in whole if l.pieces[0].iterator in iterators), loops[0].name)

    def half(loop_name: str) -> int:
        return max(1, nest.loop(loop_name, op).extent // 2)

    if op in ("interchange", "reorder"):
        return make_step(op, {"loops": [loops[0].name, loops[1].name]})
    if op == "fuse":
        a, b = pairs[0] if pairs else loops[:2]
        return make_step(op, {"loops": [a.name, b.name]})
    if op == "tile":
        a, b = next(((a, b) for a, b in pairs if not a.reduction), pairs[0] if pairs else loops[:2])
        return make_step(op, {"loops": [a.name, b.name], "factors": [2, 2]})
    if op == "group":
        return make_step(op, {"loops": [over("co"), over("ci")], "G": 2})
    if op == "peel":
        name = over("co")
        return make_step(op, {"loop": name, "at": half(name) * nest.loop(name, op).pieces[0].stride})
    if op == "split":
        name = next((l.name for l in reversed(loops) if l.extent % 2 == 0 and l.extent > 2), loops[-1].name)
        return make_step(op, {"loop": name, "factor": 2})
    if op in ("unroll", "vectorize"):
        return make_step(op, {"loop": loops[-1].name})
    if op in ("parallel", "prefetch"):
        return make_step(op, {"loop": loops[0].name})
    return make_step(op, {"loop": over("co", "ci", "oh", "ow"), "B": 2})  # bottleneck


class SequenceHistory:
    """Undoable edits of a sequence, shared by the GUI editor and scripts. Sequences are small
    and immutable, so each undo step keeps the sequence before and after it."""

    def __init__(self, seq: Sequence, on_change: Callable[[], None] | None = None):
        self.current = seq
        self._done: list[tuple[str, Sequence, Sequence]] = []
        self._undone: list[tuple[str, Sequence, Sequence]] = []
        self.on_change = on_change

    def apply(self, new: Sequence, text: str) -> None:
        if new == self.current:
            return
        self._done.append((text, self.current, new))
        self._undone.clear()
        self._set(new)

    def undo(self) -> None:
        if self._done:
            entry = self._done.pop()
            self._undone.append(entry)
            self._set(entry[1])

    def redo(self) -> None:
        if self._undone:
            entry = self._undone.pop()
            self._done.append(entry)
            self._set(entry[2])

    @property
    def undo_text(self) -> str:
        return self._done[-1][0] if self._done else ""

    @property
    def redo_text(self) -> str:
        return self._undone[-1][0] if self._undone else ""

    def _set(self, seq: Sequence) -> None:
        self.current = seq
        if self.on_change:
            self.on_change()

    # edits, one undo step each
    def insert(self, index: int, step: Step) -> None:
        steps = list(self.current.steps)
        steps.insert(index, step)
        self.apply(self.current.with_steps(steps), f"Add {step.text()}")

    def remove(self, index: int) -> None:
        steps = list(self.current.steps)
        removed = steps.pop(index)
        self.apply(self.current.with_steps(steps), f"Remove {removed.text()}")

    def move(self, source: int, target: int) -> None:
        steps = list(self.current.steps)
        step = steps.pop(source)
        steps.insert(target, step)
        self.apply(self.current.with_steps(steps), f"Move {step.text()}")

    def replace(self, index: int, step: Step) -> None:
        steps = list(self.current.steps)
        steps[index] = step
        self.apply(self.current.with_steps(steps), f"Edit {step.text()}")

    def declare(self, **fields) -> None:
        """Change the starting nest, the sizes or `reassociate`."""
        self.apply(replace(self.current, **fields), "Change " + ", ".join(fields))


__all__ = [
    "ARCHITECTURE_OPS",
    "FORMAT",
    "MEANING_PRESERVING_OPS",
    "STEP_DOCS",
    "STEP_PARAMS",
    "STEP_VERSION",
    "VERSION",
    "Sequence",
    "SequenceHistory",
    "Step",
    "apply_sequence",
    "apply_step",
    "factor",
    "load_sequence",
    "make_step",
    "parse_sequence",
    "save_sequence",
    "sequence_document",
    "sequence_from_document",
    "start",
    "suggest_step",
]
