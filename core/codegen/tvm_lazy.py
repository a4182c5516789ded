"""Lazy tensors for TVM code generation: a view is an index remapping, not a stage.

Syno's views are coordinate expressions read bottom-up: a consumer asks for
element `idx` of a view, the view rewrites `idx` into coordinates of the tensor
it reads, and so on down to a materialised *root* (the input placeholder or a
compute stage). `Lazy` holds that composed remapping. Zero padding (from
unfold) is deferred to the root as a separate pad stage, which TVM runs much
faster than a bounds check inside the consumer's inner loop. Rolls (from shift)
are applied to the root as a roll stage too, so the index arithmetic views
compose never wraps a constant offset in a modulo: TVM 0.27's iter-map
simplifier (run by FlattenBuffer on every build) miscompiles such nests, e.g.
it rewrites floormod(floormod(i + 1, 5) + 4, 5) to floormod(i + 4, 5).

`Stages` creates the compute stages of one PrimFunc: unique names, int32 size
checks and the pad and roll stages (shared between consumers of the same root)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from math import prod

from tvm import te, tirx

from ..analysis.indexing import Coord
from .errors import CodegenError

DTYPE = "float32"
_INT32_MAX = 2**31 - 1

Index = list  # of tvm PrimExpr, one per axis (batch first)


@dataclass(frozen=True)
class Lazy:
    """`index(idx)` maps an element of this view to coordinates of `root` (before padding);
    `pads[a]` = zeros (before, after) that root axis `a` needs for coordinates outside it."""

    root: te.Tensor
    pads: tuple[tuple[int, int], ...]
    shape: tuple[int, ...]
    index: Callable[[Index], Index]

    @classmethod
    def of(cls, tensor: te.Tensor) -> Lazy:
        shape = tuple(int(s) for s in tensor.shape)
        return cls(tensor, ((0, 0),) * len(shape), shape, list)

    def view(self, shape: Sequence[int], remap: Callable[[Index], Index]) -> Lazy:
        """This tensor seen through one more view: `remap` maps the new view's index to this one's."""
        inner = self.index
        return replace(self, shape=tuple(shape), index=lambda idx: inner(remap(list(idx))))

    def coordinates(self, names: str = "i") -> tuple[list[tirx.Var], Index]:
        """Fresh variables for this view's axes and the root coordinates they read (for analysis)."""
        axes = [te.var(f"{names}{a}") for a in range(len(self.shape))]
        return axes, self.index(axes)

    def is_root(self) -> bool:
        """True when the view is its root itself (identity remapping, no padding)."""
        if self.shape != tuple(int(s) for s in self.root.shape) or any(p != (0, 0) for p in self.pads):
            return False
        axes, coords = self.coordinates()
        return all(c.same_as(a) for c, a in zip(axes, coords))


def uses(expr) -> set[str]:
    """Names of the variables an index expression reads."""
    return {v.name for v in tirx.analysis.undefined_vars(expr)}


def coord(expr) -> Coord:
    """An index expression as core.analysis.indexing sees it: the variable it is, or those it uses."""
    if isinstance(expr, int):
        return Coord(None, frozenset())
    return Coord(expr.name if isinstance(expr, tirx.Var) else None, frozenset(uses(expr)))


class Stages:
    """Builder of the compute stages of one PrimFunc; `node` labels say where a failure comes from."""

    def __init__(self):
        self._names: set[str] = set()
        self._padded: dict[tuple, te.Tensor] = {}
        self._rolled: dict[tuple, te.Tensor] = {}
        self._roll_of: dict[str, tuple[te.Tensor, int, int]] = {}  # roll stage -> (root, axis, offset)

    def name(self, base: str) -> str:
        name, k = base, 2
        while name in self._names:
            name, k = f"{base}_{k}", k + 1
        self._names.add(name)
        return name

    def placeholder(self, shape: Sequence[int], name: str, node: str) -> te.Tensor:
        self._check(shape, name, node)
        return te.placeholder(tuple(shape), DTYPE, name=self.name(name))

    def compute(self, shape: Sequence[int], fn: Callable, name: str, node: str) -> te.Tensor:
        self._check(shape, name, node)
        return te.compute(tuple(shape), fn, name=self.name(name))

    @staticmethod
    def _check(shape: Sequence[int], name: str, node: str) -> None:
        if prod(shape) > _INT32_MAX:
            raise CodegenError(
                f"{node}: stage {name} would hold {prod(shape):,} elements "
                f"{list(shape)}, beyond TVM's 32-bit indexing; use smaller bindings"
            )

    def read(self, lazy: Lazy, idx: Sequence):
        """The element `idx` of a lazy tensor, read from its (padded) root."""
        coords = lazy.index(list(idx))
        root = self.padded(lazy.root, lazy.pads)
        return root[tuple(c + before for c, (before, _) in zip(coords, lazy.pads))]

    def padded(self, root: te.Tensor, pads: tuple[tuple[int, int], ...]) -> te.Tensor:
        """`root` with zeros around it, as its own stage (one per root and padding). Every element,
        the zeros too, reads an element of `root` (the index clamped into it, the value masked):
        MetaSchedule computes a padding under a tile of the stage it pads (reverse_compute_at),
        which computes only the elements whose reads fall in the tile, so a zero that read
        outside `root` was never computed and a tuned kernel's border held garbage."""
        if all(p == (0, 0) for p in pads):
            return root
        key = (root.op.name, pads)
        if key not in self._padded:
            shape = [int(s) for s in root.shape]

            def body(*i):
                inside = [
                    tirx.all(before <= x, x < before + n)
                    for x, n, (before, after) in zip(i, shape, pads)
                    if before or after
                ]
                value = root[
                    tuple(
                        tirx.min(tirx.max(x - before, 0), n - 1) if before or after else x
                        for x, n, (before, after) in zip(i, shape, pads)
                    )
                ]
                # the mask multiplies: under a select or if_then_else TVM simplifies the clamp away
                one, zero = tirx.const(1.0, DTYPE), tirx.const(0.0, DTYPE)
                return value * tirx.Select(tirx.all(*inside), one, zero)

            self._padded[key] = self.compute(
                [n + b + a for n, (b, a) in zip(shape, pads)], body, f"pad_{root.op.name}", f"padding of {root.op.name}"
            )
        return self._padded[key]

    def rolled(self, root: te.Tensor, axis: int, offset: int) -> te.Tensor:
        """`root` with element i of `axis` read from (i + offset) mod size, as its own stage
        (one per root, axis and offset; a roll of a roll along the same axis is one roll).
        No floormod: inlined into a tiled, vectorised loop, TVM 0.27 simplified floormod(i + 1, W)
        as if it never wrapped, and a tuned kernel read past the row's end at its last column; the
        two reads of the wrap, each in range under its condition, leave it nothing to get wrong."""
        size = int(root.shape[axis])
        if root.op.name in self._roll_of and self._roll_of[root.op.name][1] == axis:
            root, _, before = self._roll_of[root.op.name]
            offset = (offset + before) % size
        if offset == 0:
            return root
        key = (root.op.name, axis, offset)
        if key not in self._rolled:

            def body(*i):
                j = i[axis] + offset
                return tirx.if_then_else(
                    j < size, root[(*i[:axis], j, *i[axis + 1 :])], root[(*i[:axis], j - size, *i[axis + 1 :])]
                )

            rolled = self.compute([int(s) for s in root.shape], body, f"roll_{root.op.name}", f"roll of {root.op.name}")
            self._rolled[key] = rolled
            self._roll_of[rolled.op.name] = (root, axis, offset)
        return self._rolled[key]

    def materialise(self, lazy: Lazy, name: str, node: str) -> te.Tensor:
        """A stage holding the view's values (or its root when the view is the root itself)."""
        if lazy.is_root():
            return lazy.root
        return self.compute(lazy.shape, lambda *i: self.read(lazy, i), name, node)
