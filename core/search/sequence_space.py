"""NAS-PTE's step space: every step the sequence editor offers, with the parameters that fit
a nest, on one part of a peeled program or on all of them.

`options` lists the parameters of one kind of step a nest could take; the nest itself
judges them (core.ir.sequence.apply_step refuses what does not apply), so the options may
be generous but never miss a step the published sequences take: factors are the small
powers of two and the halves, quarters and eighths of a loop (a row split at H/2, a peel at
C_out/4), groups may be as many as the loop's iterations (depthwise, one strip per group)."""

from __future__ import annotations

import itertools

from ..ir.loopnest import GROUP_PARTNERS, Loop, Nest
from ..ir.sequence import STEP_PARAMS

SMALL_FACTORS = (2, 4, 8)
FRACTIONS = (2, 4, 8)  # a loop's half, quarter and eighth
PEEL_SHARES = ((1, 4), (1, 2), (3, 4))  # where the output channels may be cut
OUTPUT_ITERATORS = tuple(GROUP_PARTNERS)  # co, oh, ow: what group and peel start from


def factors(loop: Loop) -> list[int]:
    """Proper divisors a loop may be split, tiled or bottlenecked by."""
    e = loop.extent
    found = set(SMALL_FACTORS) | {e // f for f in FRACTIONS if e % f == 0}
    return sorted(f for f in found if 1 < f < e and e % f == 0)


def options(nest: Nest, op: str) -> list[dict]:
    """The parameters of step `op` (one of core.ir.sequence.STEP_PARAMS) to try on `nest`
    (core.ir.sequence.make_step makes one a step: only the one drawn is built)."""
    if op not in STEP_PARAMS:
        raise ValueError(f"unknown step {op!r}")
    loops, names = nest.loops, nest.names
    if op == "interchange":
        return [{"loops": list(pair)} for pair in itertools.combinations(names, 2)]
    if op == "reorder":  # three loops put in another order, in the places they hold
        return [
            {"loops": list(order)}
            for three in itertools.combinations(names, 3)
            for order in itertools.permutations(three)
            if order != three
        ]
    if op == "fuse":
        return [{"loops": [a, b]} for a, b in itertools.pairwise(names)]
    if op in ("unroll", "parallel", "prefetch"):
        return [{"loop": name} for name in names]
    if op == "vectorize":
        return [{"loop": names[-1]}]
    if op == "split":
        return [{"loop": l.name, "factor": f} for l in loops for f in factors(l)]
    if op == "tile":
        return [
            {"loops": [a.name, b.name], "factors": [fa, fb]}
            for a, b in itertools.combinations(loops, 2)
            for fa in factors(a)
            for fb in factors(b)
        ]
    if op == "peel":
        return [
            {"loop": l.name, "at": l.extent * share // whole * l.pieces[0].stride}
            for l in _over(loops, ("co",))
            for share, whole in PEEL_SHARES
            if l.extent * share % whole == 0
        ]
    if op == "bottleneck":
        return [
            {"loop": l.name, "B": b}
            for l in _over(loops, ("co", "ci", "oh", "ow", "kh", "kw"))
            for b in [*factors(l), *([l.extent] if l.pieces[0].iterator in ("kh", "kw") else [])]
        ]
    # group: a loop over an output iterator with a loop over the input iterator it reads through
    return [
        {"loops": [a.name, b.name], "G": g}
        for a in _over(loops, OUTPUT_ITERATORS)
        for b in loops
        if b.iterators == (GROUP_PARTNERS[a.pieces[0].iterator],)
        for g in [*factors(a), a.extent]
        if g > 1
    ]


def _over(loops: tuple[Loop, ...], iterators: tuple[str, ...]) -> list[Loop]:
    """Loops of one piece over one of `iterators` (the nest checks the piece is the outermost)."""
    return [l for l in loops if len(l.pieces) == 1 and l.pieces[0].iterator in iterators]
