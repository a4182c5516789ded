"""A transformed nest as a TVM PrimFunc and an `s_tir.Schedule` (TVM 0.27).

The tensor expression is the *final* computation (architecture steps baked in):
a zero-padded input stage, one reduction stage per part (`O`, or `Y0`, `Y1`, ...)
over (n, c, y, x) x (ci, kh, kw), and, when a bottleneck repeats values or the
nest was peeled, an output stage `O` that gathers the parts. The schedule puts
each part's loops in the nest's starting order, then replays the sequence's
structural events (split, fuse, reorder, unroll/vectorize/parallel; a group is a
split of the output loop) on the parts they reached. The untransformed PrimFunc
is the same expression unscheduled, so the two must agree numerically.

Imports TVM: worker processes, tests and benchmarks only. `sequence_tvmscript` takes and
returns JSON, for core.jobs.isolate.call_in_subprocess; core.compile.sequence_kernels
compiles, runs and times the result."""

from __future__ import annotations

from collections.abc import Mapping

import tvm
from tvm import te, tirx

from ..analysis.legality import SequenceReport, check_sequence
from ..ir.loopnest import Computation, Event, Nest, Program
from ..ir.sequence import sequence_from_document
from .errors import CodegenError

DTYPE = "float32"


def build_expression(program: Program, batch: int = 1) -> tuple[list[te.Tensor], list[str]]:
    """PrimFunc arguments [I, W0, W1, ..., O] and the reduction stage name of each part."""
    first = program.parts[0].comp
    spatial = first.spatial
    c_in = first.size("C_in")
    image = te.placeholder(
        (batch, c_in, first.size("H"), first.size("W")) if spatial else (batch, c_in), DTYPE, name="I"
    )
    pad = first.size("K") // 2 if spatial else 0
    padded = image
    if pad:
        h, w = first.size("H"), first.size("W")
        padded = te.compute(
            (batch, c_in, h + 2 * pad, w + 2 * pad),
            lambda n, c, y, x: tirx.if_then_else(
                tirx.all(y >= pad, y < h + pad, x >= pad, x < w + pad),
                image[n, c, y - pad, x - pad],
                tirx.const(0.0, DTYPE),
            ),
            name="I_pad",
        )
    many = len(program.parts) > 1 or first.replicated
    weights, stages, names = [], [], []
    for k, nest in enumerate(program.parts):
        name = f"Y{k}" if many else "O"
        weight, stage = _part(nest.comp, padded, pad, batch, name, f"W{k}" if len(program.parts) > 1 else "W")
        weights.append(weight)
        stages.append(stage)
        names.append(name)
    out = _gather(program, stages, batch) if many else stages[0]
    return [image, *weights, out], names


def _part(c: Computation, padded: te.Tensor, pad: int, batch: int, name: str, weight_name: str):
    ext = c.extents()
    per_group, in_per_group = ext["co"], c.size("C_in") // ext["g"]
    ci = te.reduce_axis((0, ext["ci"]), "ci")

    def channel(o):
        block = o // per_group if ext["g"] > 1 else 0
        return block * in_per_group + ci * c.factor("ci").value

    if not c.spatial:
        weight = te.placeholder((c.computed_channels, ext["ci"]), DTYPE, name=weight_name)
        stage = te.compute(
            (batch, c.computed_channels),
            lambda n, co: te.sum(padded[n, channel(co)] * weight[co, ci], axis=[ci]),
            name=name,
        )
        return weight, stage
    kh, kw = te.reduce_axis((0, ext["kh"]), "kh"), te.reduce_axis((0, ext["kw"]), "kw")
    weight = te.placeholder((c.computed_channels, ext["ci"], ext["kh"], ext["kw"]), DTYPE, name=weight_name)

    def coordinate(pos, it, tap, window, strips, size):
        """Padded input coordinate of output position `pos` and `tap`, and whether it lies in its strip."""
        strip, offset = (pos // ext[it], pos % ext[it]) if ext[strips] > 1 else (0, pos)
        inside = offset * c.factor(it).value + tap - ext[window] // 2
        block = size // ext[strips]
        valid = tirx.all(inside >= 0, inside < block) if ext[strips] > 1 else None
        return strip * block + inside + pad, valid

    def body(n, co, oh, ow):  # the names TVMScript shows
        row, row_ok = coordinate(oh, "oh", kh, "kh", "gh", c.size("H"))
        col, col_ok = coordinate(ow, "ow", kw, "kw", "gw", c.size("W"))
        value = padded[n, channel(co), row, col]
        checks = [v for v in (row_ok, col_ok) if v is not None]
        if checks:
            value = tirx.if_then_else(tirx.all(*checks), value, tirx.const(0.0, DTYPE))
        return te.sum(value * weight[co, ci, kh, kw], axis=[ci, kh, kw])

    shape = (batch, c.computed_channels, ext["gh"] * ext["oh"], ext["gw"] * ext["ow"])
    return weight, te.compute(shape, body, name=name)


def _gather(program: Program, stages: list[te.Tensor], batch: int) -> te.Tensor:
    """O from the parts: channel ranges in order, each bottlenecked value repeated."""
    first = program.parts[0].comp
    total = sum(n.comp.out_count for n in program.parts)
    spatial = (first.size("H"), first.size("W")) if first.spatial else ()

    def body(n, o, *pos):
        value = tirx.const(0.0, DTYPE)
        for nest, stage in reversed(list(zip(program.parts, stages))):
            c = nest.comp
            idx = [n, (o - c.out_start) // c.factor("co").value]
            idx += [p // c.factor(it).value for p, it in zip(pos, ("oh", "ow"))]
            value = tirx.if_then_else(o < c.out_start + c.out_count, stage[tuple(idx)], value)
        return value

    return te.compute((batch, total, *spatial), body, name="O")


def schedule(report: SequenceReport, batch: int = 1) -> tuple[tvm.IRModule, tvm.s_tir.Schedule]:
    """(untransformed module, schedule of the sequence's meaning-preserving steps)."""
    program = report.final
    if program is None or not report.legal:
        raise CodegenError(
            "the schedule is built only for a sequence whose steps all apply and are legal: "
            + "; ".join(report.problems())
        )
    args, names = build_expression(program, batch)
    mod = tvm.IRModule({"main": te.create_prim_func(args)})
    sch = tvm.s_tir.Schedule(mod)
    events = [*report.start_events, *report.events]
    for nest, name in zip(program.parts, names):
        _replay(sch, name, nest, events)
    return mod, sch


def _replay(sch, block_name: str, nest: Nest, events: list[Event]) -> None:
    loops = sch.get_loops(sch.get_sblock(block_name))
    if nest.comp.spatial:
        _n, co, oh, ow, ci, kh, kw = loops
        rv = {"co": co, "ci": ci, "oh": oh, "ow": ow, "kh": kh, "kw": kw}
        sch.reorder(co, ci, oh, ow, kh, kw)
    else:
        _n, co, ci = loops
        rv = {"co": co, "ci": ci}
    for e in events:
        if nest.path[: len(e.path)] != e.path:
            continue
        try:
            if e.kind == "split":
                name, outer, inner, factor = e.args
                rv[outer], rv[inner] = sch.split(rv.pop(name), [None, factor])
            elif e.kind == "fuse":
                a, b, fused = e.args
                rv[fused] = sch.fuse(rv.pop(a), rv.pop(b))
            elif e.kind == "reorder":
                sch.reorder(*(rv[name] for name in e.args))
            elif e.kind == "annotate":
                name, kind = e.args
                if nest_extent(sch, rv[name]) > 1:  # one iteration: nothing to annotate (TVM would
                    getattr(sch, kind)(rv[name])  # refuse it on a reduction loop all the same)
        except tvm.s_tir.ScheduleError as err:
            reason = str(err).rsplit("Error message:", 1)[-1].strip()
            raise CodegenError(
                f"TVM refused {e.kind} {', '.join(map(str, e.args))} on {block_name}: {reason}"
            ) from None


def nest_extent(sch, loop) -> int:
    return int(sch.get(loop).extent)


# -- JSON entry points for worker processes -------------------------------------------------
def sequence_tvmscript(document: dict, bindings: Mapping[str, int] | None = None) -> str:
    """TVMScript of the scheduled PrimFunc."""
    _, sch = schedule(check_sequence(sequence_from_document(document), bindings))
    return sch.mod.script()
