"""Loop nests of a convolution or dense layer, and the transformations on them (NAS-PTE).

A nest is one statement inside a list of loops,
    for co, ci, oh, ow, kh, kw:  O[co, oh, ow] += W[co, ci, kh, kw] * I[ci, oh + kh - 1, ow + kw - 1]
held at concrete sizes. Two things change under transformation:

- the *loops* (schedule): each loop is made of pieces of the statement's iterators
  (split makes two pieces of one iterator, fuse puts two pieces in one loop), in an
  order, possibly annotated unroll/vectorize/parallel and marked to prefetch;
- the *computation* (architecture): `bottleneck` and `group` change what is computed.

Meaning of the architecture-changing steps (every result is a drop-in
[C_in, H, W] -> [C_out, H, W] operator):

- bottleneck(X, B) makes X visit one index in B. On an output iterator (co, oh, ow)
  only every B-th output is computed and each computed value is repeated B times
  (co: C_out/B channels, each repeated; oh/ow: a stride-B convolution upsampled by
  nearest neighbour, the spatial bottleneck). On ci the layer reads every B-th input
  channel; on kh/kw the window shrinks to K/B taps, still centred.
- group(a, b, G) tiles the output index of `a` and the input index read through `b`
  into G blocks and keeps the diagonal: output block g reads only input block g.
  (co, ci) is grouped convolution (G = C: depthwise); (oh, kh) and (ow, kw) run the
  convolution on G strips with windows clipped at the strip edges (spatial grouping).
- peel(co, at) is index-set splitting: output channels [0, at) and [at, C) become two
  parts, each a nest of its own from then on (steps may then target one part); the
  parts' outputs are concatenated.

Every operation returns a new nest (nests are immutable) and the structural events
that code generation replays on a TVM schedule. Anything that cannot be applied
raises LoopNestError (DivisibilityError when a size does not divide) naming the
step, the loop and the sizes."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from math import prod

from core.errors import TesseraError, shown

from .symbolic import Size

OUTPUT_ITERATORS = ("co", "oh", "ow", "g", "gh", "gw")
REDUCTION_ITERATORS = ("ci", "kh", "kw")
ANNOTATIONS = ("unroll", "vectorize", "parallel")
#: output iterator -> the iterator whose *input* index it is grouped with
GROUP_PARTNERS = {"co": "ci", "oh": "kh", "ow": "kw"}
GROUP_ITERATOR = {"co": "g", "oh": "gh", "ow": "gw"}


_NO_NEXT_ITERATION = "a vector loop runs its iterations at once, so none comes next to prefetch for"


class LoopNestError(TesseraError):
    """A transformation cannot be applied to the nest (unknown loop, wrong shape of nest)."""


class DivisibilityError(LoopNestError):
    """A loop's extent is not divisible by a step's factor."""


@dataclass(frozen=True)
class Factor:
    """A step's factor: the expression as written (for the symbolic operator) and its value."""

    expr: Size
    value: int

    def __mul__(self, other: Factor) -> Factor:
        return Factor(self.expr * other.expr, self.value * other.value)

    def __str__(self) -> str:
        return str(self.expr)


ONE = Factor(Size(1), 1)


@dataclass(frozen=True)
class Piece:
    """`extent` values of one iterator, contributing value * stride to it."""

    iterator: str
    extent: int
    stride: int


@dataclass(frozen=True)
class Loop:
    name: str
    pieces: tuple[Piece, ...]  # several only for a fused loop, outermost first
    annotation: str | None = None
    prefetch: bool = False  # each iteration first fetches into cache the input the next one reads

    @property
    def marks(self) -> str:
        """What it is marked with ('parallel', 'prefetch', 'unroll and prefetch'), '' if nothing."""
        return " and ".join(m for m in (self.annotation, "prefetch" if self.prefetch else None) if m)

    @property
    def extent(self) -> int:
        return prod(p.extent for p in self.pieces)

    @property
    def reduction(self) -> bool:
        return self.pieces[0].iterator in REDUCTION_ITERATORS

    @property
    def iterators(self) -> tuple[str, ...]:
        return tuple(p.iterator for p in self.pieces)


@dataclass(frozen=True)
class Event:
    """A structural change for schedule replay: split, fuse, reorder, annotate or peel,
    on the part reached by `path` (and every part later peeled from it)."""

    kind: str
    path: tuple[int, ...]
    args: tuple


@dataclass(frozen=True)
class Computation:
    """What one part computes: the layer's sizes, its slice of output channels and the
    architecture changes (bottleneck factors per iterator, channel and spatial groups)."""

    kind: str  # "conv2d" or "dense"
    sizes: tuple[tuple[str, int], ...]  # C_in, C_out (H, W, K for conv2d)
    out_start: int
    out_count: int
    bottleneck: tuple[tuple[str, Factor], ...] = ()
    groups: tuple[tuple[str, Factor], ...] = ()  # output iterator (co, oh, ow) -> G

    def size(self, name: str) -> int:
        return dict(self.sizes)[name]

    def factor(self, iterator: str) -> Factor:
        return dict(self.bottleneck).get(iterator, ONE)

    def group(self, iterator: str) -> Factor:
        return dict(self.groups).get(iterator, ONE)

    @property
    def spatial(self) -> bool:
        return self.kind == "conv2d"

    @property
    def computed_channels(self) -> int:
        """Output channels actually computed (before a channel bottleneck repeats them)."""
        return self.out_count // self.factor("co").value

    @property
    def computed_rows(self) -> int:
        return self.size("H") // self.factor("oh").value

    @property
    def computed_cols(self) -> int:
        return self.size("W") // self.factor("ow").value

    def window(self, iterator: str) -> int:
        """Taps of kh or kw; the window is centred: tap t reads offset t - window // 2."""
        return self.size("K") // self.factor(iterator).value

    def extents(self) -> dict[str, int]:
        """Extent of every iterator of the statement."""
        g = self.group("co").value
        ext = {"g": g, "co": self.computed_channels // g, "ci": self.size("C_in") // (self.factor("ci").value * g)}
        if self.spatial:
            gh, gw = self.group("oh").value, self.group("ow").value
            ext.update(
                gh=gh,
                oh=self.computed_rows // gh,
                gw=gw,
                ow=self.computed_cols // gw,
                kh=self.window("kh"),
                kw=self.window("kw"),
            )
        return ext

    @property
    def replicated(self) -> bool:
        """Whether an output bottleneck repeats computed values into the output."""
        return any(self.factor(i).value > 1 for i in ("co", "oh", "ow"))

    def accesses(self, weight: str = "W") -> Accesses:
        """The statement's array accesses in terms of its iterators (see Accesses)."""
        ext = self.extents()
        channel = _affine([(ext["co"], "g"), (1, "co")] if self.group("co").value > 1 else [(1, "co")])
        w_index = [channel, "ci"]
        in_channel = _affine(
            ([(self.size("C_in") // ext["g"], "g")] if ext["g"] > 1 else []) + [(self.factor("ci").value, "ci")]
        )
        out_index, in_index, repeat = [channel], [in_channel], [self.factor("co").value]
        clip = None
        if self.spatial:
            w_index += ["kh", "kw"]
            for o, k, grp, size in (("oh", "kh", "gh", "H"), ("ow", "kw", "gw", "W")):
                blocks, block = ext[grp], self.size(size) // ext[grp]
                out_index.append(_affine([(ext[o], grp), (1, o)] if blocks > 1 else [(1, o)]))
                in_index.append(
                    _affine(
                        ([(block, grp)] if blocks > 1 else []) + [(self.factor(o).value, o), (1, k)], -(ext[k] // 2)
                    )
                )
                repeat.append(self.factor(o).value)
                if blocks > 1:
                    clip = (f"{clip}; " if clip else "") + (
                        f"reads stay in strip {grp} of {block} {'rows' if o == 'oh' else 'columns'}"
                    )
        offset = f"{self.out_start} + " if self.out_start else ""
        if self.replicated:
            names = ["c", "y", "x"][: len(out_index)]
            target = f"Y[{', '.join(out_index)}]"
            sources = [n if r == 1 else f"{n} // {r}" for n, r in zip(names, repeat)]
            copy = f"O[{offset}{', '.join(names)}] = Y[{', '.join(sources)}]"
        else:
            target = f"O[{offset}{', '.join(out_index)}]"
            copy = None
        return Accesses(target, f"{weight}[{', '.join(w_index)}]", f"I[{', '.join(in_index)}]", copy, clip)


@dataclass(frozen=True)
class Accesses:
    """`out` += `weight` * `input`; `copy` repeats a bottlenecked result Y into O;
    `clip` says where reads outside a strip give zero (spatial grouping)."""

    out: str
    weight: str
    input: str
    copy: str | None
    clip: str | None

    @property
    def statement(self) -> str:
        return f"{self.out} += {self.weight} * {self.input}"


def _affine(terms: list[tuple[int, str]], const: int = 0) -> str:
    """'g*16 + co*2 + kh - 1' from [(16, 'g'), (2, 'co'), (1, 'kh')] and -1."""
    parts = [name if coef == 1 else f"{name}*{coef}" for coef, name in terms if coef]
    text = " + ".join(parts) or "0"
    if const:
        text += f" - {-const}" if const < 0 else f" + {const}"
    return text


@dataclass(frozen=True)
class Nest:
    """One part: a computation and its loops (outermost first)."""

    comp: Computation
    loops: tuple[Loop, ...]
    path: tuple[int, ...] = ()

    # -- queries ---------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [l.name for l in self.loops]

    def position(self, name: str, what: str) -> int:
        for i, l in enumerate(self.loops):
            if l.name == name:
                return i
        raise LoopNestError(f"{what}: no loop named {shown(name)} (loops: {', '.join(self.names)})")

    def loop(self, name: str, what: str) -> Loop:
        return self.loops[self.position(name, what)]

    def pieces_of(self, iterator: str) -> list[Piece]:
        return [p for l in self.loops for p in l.pieces if p.iterator == iterator]

    def _fresh(self, base: str, taken: Collection[str] = frozenset()) -> str:
        used = set(self.names) | set(taken)
        name, k = base, 2
        while name in used:
            name, k = f"{base}{k}", k + 1
        return name

    def _whole_piece(self, name: str, what: str, iterators=None) -> tuple[int, Loop, Piece]:
        """A loop that is one piece, the outermost (largest-stride) piece of its iterator."""
        i = self.position(name, what)
        loop = self.loops[i]
        if len(loop.pieces) != 1:
            raise LoopNestError(f"{what}: {name} is a fused loop; apply it before fusing")
        piece = loop.pieces[0]
        if iterators is not None and piece.iterator not in iterators:
            raise LoopNestError(
                f"{what}: {name} runs over {piece.iterator}; this step applies to a loop over {' or '.join(iterators)}"
            )
        if max(p.stride for p in self.pieces_of(piece.iterator)) != piece.stride:
            raise LoopNestError(f"{what}: {name} is an inner piece of {piece.iterator}; apply it to the outermost one")
        return i, loop, piece

    def _with_loops(self, loops) -> Nest:
        return replace(self, loops=tuple(loops))

    def _event(self, kind: str, *args) -> Event:
        return Event(kind, self.path, tuple(args))

    # -- meaning-preserving ------------------------------------------------------------
    def split(self, name: str, factor: int, what: str) -> tuple[Nest, list[Event]]:
        """Strip-mine: loop -> (outer, inner) with `factor` inner iterations."""
        i = self.position(name, what)
        loop = self.loops[i]
        if len(loop.pieces) != 1:
            raise LoopNestError(f"{what}: {name} is a fused loop; split before fusing")
        if loop.marks:
            raise LoopNestError(f"{what}: {name} is already marked {loop.marks}; split before marking it")
        if factor < 1 or loop.extent % factor:
            raise DivisibilityError(f"{what}: {name} has {loop.extent} iterations, not divisible by {factor}")
        p = loop.pieces[0]
        outer = Loop(self._fresh(f"{name}_o"), (Piece(p.iterator, p.extent // factor, p.stride * factor),))
        inner = Loop(self._fresh(f"{name}_i", {outer.name}), (Piece(p.iterator, factor, p.stride),))
        loops = [*self.loops[:i], outer, inner, *self.loops[i + 1 :]]
        return self._with_loops(loops), [self._event("split", name, outer.name, inner.name, factor)]

    def fuse(self, a: str, b: str, what: str) -> tuple[Nest, list[Event]]:
        i, j = self.position(a, what), self.position(b, what)
        if j != i + 1:
            raise LoopNestError(f"{what}: {b} must come right after {a} to fuse them (order: {', '.join(self.names)})")
        la, lb = self.loops[i], self.loops[j]
        if la.reduction != lb.reduction:
            raise LoopNestError(f"{what}: {a} and {b} are not both output loops or both reduction loops")
        for l in (la, lb):
            if l.marks:
                raise LoopNestError(f"{what}: {l.name} is already marked {l.marks}; fuse before marking it")
        fused = Loop(self._fresh(f"{a}_{b}"), la.pieces + lb.pieces)
        loops = [*self.loops[:i], fused, *self.loops[j + 1 :]]
        return self._with_loops(loops), [self._event("fuse", a, b, fused.name)]

    def reorder(self, names: list[str], what: str) -> tuple[Nest, list[Event]]:
        """The named loops take the positions they occupy together, in the given order (as TVM)."""
        if len(set(names)) != len(names):
            raise LoopNestError(f"{what}: a loop is named twice")
        positions = sorted(self.position(n, what) for n in names)
        loops = list(self.loops)
        for pos, n in zip(positions, names):
            loops[pos] = self.loop(n, what)
        return self._with_loops(loops), [self._event("reorder", *names)]

    def interchange(self, a: str, b: str, what: str) -> tuple[Nest, list[Event]]:
        first, second = sorted((a, b), key=lambda n: self.position(n, what))
        return self.reorder([second, first], what)

    def annotate(self, name: str, kind: str, what: str) -> tuple[Nest, list[Event]]:
        i = self.position(name, what)
        loop = self.loops[i]
        if loop.annotation:
            raise LoopNestError(f"{what}: {name} is already marked {loop.annotation}")
        if kind == "vectorize" and i != len(self.loops) - 1:
            raise LoopNestError(f"{what}: only the innermost loop ({self.loops[-1].name}) can be vectorized")
        if kind == "vectorize" and loop.prefetch:
            raise LoopNestError(f"{what}: {name} prefetches; {_NO_NEXT_ITERATION}")
        loops = list(self.loops)
        loops[i] = replace(loop, annotation=kind)
        return self._with_loops(loops), [self._event("annotate", name, kind)]

    def prefetch(self, name: str, what: str) -> tuple[Nest, list[Event]]:
        """Mark a loop to fetch, at the start of each iteration, the input its next iteration
        reads first: a cache hint that changes no value (TE's prefetch, which NAS-PTE lists)."""
        i = self.position(name, what)
        loop = self.loops[i]
        if loop.prefetch:
            raise LoopNestError(f"{what}: {name} already prefetches")
        if loop.annotation == "vectorize":
            raise LoopNestError(f"{what}: {name} is vectorized; {_NO_NEXT_ITERATION}")
        loops = list(self.loops)
        loops[i] = replace(loop, prefetch=True)
        return self._with_loops(loops), [self._event("prefetch", name)]

    def peel(self, name: str, at: int, what: str) -> tuple[list[Nest], list[Event]]:
        """Index-set splitting of the output channels into [0, at) and [at, C)."""
        i, loop, piece = self._whole_piece(name, what, ("co",))
        comp = self.comp
        if comp.group("co").value > 1 or comp.factor("co").value > 1:
            raise LoopNestError(f"{what}: peel the output channels before grouping or bottlenecking them")
        if not 0 < at < comp.out_count or at % piece.stride:
            raise DivisibilityError(
                f"{what}: cannot peel {comp.out_count} output channels at {at} "
                f"(need 0 < at < {comp.out_count} and a multiple of {piece.stride})"
            )
        parts = []
        for k, (start, count) in enumerate(((comp.out_start, at), (comp.out_start + at, comp.out_count - at))):
            loops = list(self.loops)
            loops[i] = replace(loop, pieces=(replace(piece, extent=count // piece.stride),))
            parts.append(Nest(replace(comp, out_start=start, out_count=count), tuple(loops), (*self.path, k)))
        return parts, [self._event("peel")]

    # -- architecture-changing ---------------------------------------------------------
    def bottleneck(self, name: str, b: Factor, what: str) -> tuple[Nest, list[Event]]:
        allowed = ("co", "ci", "oh", "ow", "kh", "kw") if self.comp.spatial else ("co", "ci")
        i, loop, piece = self._whole_piece(name, what, allowed)
        if b.value < 1 or loop.extent % b.value:
            raise DivisibilityError(
                f"{what}: {name} has {loop.extent} iterations, not divisible by {b.expr} = {b.value}"
            )
        it = piece.iterator
        factors = dict(self.comp.bottleneck)
        factors[it] = factors.get(it, ONE) * b
        comp = replace(self.comp, bottleneck=tuple(sorted(factors.items())))
        loops = list(self.loops)
        loops[i] = replace(loop, pieces=(replace(piece, extent=piece.extent // b.value),))
        return replace(self, comp=comp, loops=tuple(loops)), []

    def group(self, a: str, b: str, g: Factor, what: str) -> tuple[Nest, list[Event]]:
        outputs = tuple(GROUP_PARTNERS) if self.comp.spatial else ("co",)
        i, la, pa = self._whole_piece(a, what, outputs)
        partner = GROUP_PARTNERS[pa.iterator]
        if self.comp.group(pa.iterator).value > 1:
            raise LoopNestError(
                f"{what}: {pa.iterator} is already grouped; group it once with the product of the factors"
            )
        j = self.position(b, what)
        lb = self.loops[j]
        if lb.iterators != (partner,):
            raise LoopNestError(
                f"{what}: {pa.iterator} is grouped with the input it reads through "
                f"{partner}; name a loop over {partner}, not {b}"
            )
        if partner == "ci":
            j, lb, pb = self._whole_piece(b, what)
        for loop in (la, lb) if partner == "ci" else (la,):
            if g.value < 1 or loop.extent % g.value:
                raise DivisibilityError(
                    f"{what}: {loop.name} has {loop.extent} iterations, not divisible by {g.expr} = {g.value}"
                )
        groups = dict(self.comp.groups)
        groups[pa.iterator] = g
        comp = replace(self.comp, groups=tuple(sorted(groups.items())))
        block = Loop(self._fresh(GROUP_ITERATOR[pa.iterator]), (Piece(GROUP_ITERATOR[pa.iterator], g.value, 1),))
        rest = replace(la, pieces=(replace(pa, extent=pa.extent // g.value),))
        loops = list(self.loops)
        if partner == "ci":
            loops[j] = replace(lb, pieces=(replace(pb, extent=pb.extent // g.value),))
        loops[i : i + 1] = [block, rest]
        return (
            replace(self, comp=comp, loops=tuple(loops)),
            [self._event("split", a, block.name, rest.name, rest.extent)],
        )


@dataclass(frozen=True)
class Program:
    """The nest as transformed so far: one part, or several after peeling (concatenated)."""

    base: str
    bindings: tuple[tuple[str, int], ...]
    parts: tuple[Nest, ...]

    def part_of(self, path: tuple[int, ...]) -> Nest:
        for p in self.parts:
            if p.path == path:
                return p
        raise KeyError(path)


# -- the starting nests -----------------------------------------------------------------
@dataclass(frozen=True)
class BaseNest:
    name: str
    kind: str
    variables: tuple[str, ...]
    description: str
    prelude: tuple = ()  # steps (op, params) applied before the user's, e.g. the grouping


BASES = {
    "conv2d": BaseNest(
        "conv2d",
        "conv2d",
        ("C_in", "C_out", "H", "W", "K"),
        "KxK convolution, same padding: for co, ci, oh, ow, kh, kw",
    ),
    "grouped_conv2d": BaseNest(
        "grouped_conv2d",
        "conv2d",
        ("C_in", "C_out", "H", "W", "K", "G"),
        "grouped KxK convolution: conv2d with group(co, ci, G)",
        (("group", {"loops": ["co", "ci"], "G": "G"}),),
    ),
    "dense": BaseNest("dense", "dense", ("C_in", "C_out"), "fully connected layer: for co, ci"),
}


def initial_nest(base: BaseNest, bindings: Mapping[str, int]) -> Nest:
    """The untransformed nest of a base at concrete sizes (its prelude is applied by the caller)."""
    missing = [v for v in base.variables if v not in bindings]
    if missing:
        raise LoopNestError(f"{base.name} needs values for {', '.join(missing)}")
    sizes = tuple((v, bindings[v]) for v in base.variables if v != "G")
    for name, value in sizes:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise LoopNestError(f"{base.name}: {name} must be a positive integer, got {shown(value)}")
    comp = Computation(base.kind, sizes, 0, bindings["C_out"])
    order = ("co", "ci", "oh", "ow", "kh", "kw") if base.kind == "conv2d" else ("co", "ci")
    extents = comp.extents()
    return Nest(comp, tuple(Loop(it, (Piece(it, extents[it], 1),)) for it in order))


__all__ = [
    "ANNOTATIONS",
    "BASES",
    "GROUP_ITERATOR",
    "GROUP_PARTNERS",
    "ONE",
    "OUTPUT_ITERATORS",
    "REDUCTION_ITERATORS",
    "Accesses",
    "BaseNest",
    "Computation",
    "DivisibilityError",
    "Event",
    "Factor",
    "Loop",
    "LoopNestError",
    "Nest",
    "Piece",
    "Program",
    "initial_nest",
]
