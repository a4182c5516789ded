"""A transformed nest as a TVM PrimFunc and an `s_tir.Schedule` (TVM 0.27).

The tensor expression is the *final* computation (architecture steps baked in):
a zero-padded input stage, one reduction stage per part (`O`, or `Y0`, `Y1`, ...)
over (n, c, y, x) x (ci, kh, kw), and, when a bottleneck repeats values or the
nest was peeled, an output stage `O` that gathers the parts. The schedule puts
each part's loops in the nest's starting order, then replays the sequence's
structural events (split, fuse, reorder, unroll/vectorize/parallel; a group is a
split of the output loop) on the parts they reached. The untransformed PrimFunc
is the same expression unscheduled, so the two must agree numerically.

`prefetch` has no s_tir primitive in TVM 0.27 (TE's Stage.prefetch went with TE schedules,
and no pass inserts `tirx.prefetch`). It lowers as TE's did in the end: once the schedule is
done, the body of each marked loop starts with a call of LLVM's `llvm.prefetch` intrinsic
(read, keep in every cache level, data) on the address of the input element the loop's next
iteration reads first (its last iteration fetches its own). CPU (llvm) targets only.

Imports TVM: worker processes, tests and benchmarks only. `sequence_tvmscript` takes and
returns JSON, for core.jobs.isolate.call_in_subprocess; core.compile.sequence_verify
compiles, runs and times the result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import tvm
from tvm import s_tir, te, tirx

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
    pad = _padding(first)
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


def _padding(c: Computation) -> int:
    return c.size("K") // 2 if c.spatial else 0


def _part(c: Computation, padded: te.Tensor, pad: int, batch: int, name: str, weight_name: str):
    ext = c.extents()
    ci = te.reduce_axis((0, ext["ci"]), "ci")
    if not c.spatial:
        weight = te.placeholder((c.computed_channels, ext["ci"]), DTYPE, name=weight_name)
        stage = te.compute(
            (batch, c.computed_channels),
            lambda n, co: te.sum(padded[n, _channel(c, co, ci)] * weight[co, ci], axis=[ci]),
            name=name,
        )
        return weight, stage
    kh, kw = te.reduce_axis((0, ext["kh"]), "kh"), te.reduce_axis((0, ext["kw"]), "kw")
    weight = te.placeholder((c.computed_channels, ext["ci"], ext["kh"], ext["kw"]), DTYPE, name=weight_name)

    def body(n, co, oh, ow):  # the names TVMScript shows
        (row, col), checks = _window(c, pad, oh, ow, kh, kw)
        value = padded[n, _channel(c, co, ci), row, col]
        if checks:
            value = tirx.if_then_else(tirx.all(*checks), value, tirx.const(0.0, DTYPE))
        return te.sum(value * weight[co, ci, kh, kw], axis=[ci, kh, kw])

    shape = (batch, c.computed_channels, ext["gh"] * ext["oh"], ext["gw"] * ext["ow"])
    return weight, te.compute(shape, body, name=name)


def _channel(c: Computation, co, ci):
    """The input channel output channel `co` reads at reduction step `ci` (in its group's block)."""
    ext = c.extents()
    block = co // ext["co"] if ext["g"] > 1 else 0
    return block * (c.size("C_in") // ext["g"]) + ci * c.factor("ci").value


def _window(c: Computation, pad: int, oh, ow, kh, kw) -> tuple[list, list]:
    """The padded input's row and column read at output position (oh, ow) and taps (kh, kw),
    and the conditions for the reads to lie in their strips (none without spatial groups)."""
    ext, coordinates, checks = c.extents(), [], []
    for pos, it, tap, window, strips, size in (
        (oh, "oh", kh, "kh", "gh", c.size("H")),
        (ow, "ow", kw, "kw", "gw", c.size("W")),
    ):
        strip, offset = (pos // ext[it], pos % ext[it]) if ext[strips] > 1 else (0, pos)
        inside = offset * c.factor(it).value + tap - ext[window] // 2
        block = size // ext[strips]
        if ext[strips] > 1:
            checks.append(tirx.all(inside >= 0, inside < block))
        coordinates.append(strip * block + inside + pad)
    return coordinates, checks


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


class Scheduled(NamedTuple):
    untransformed: tvm.IRModule
    schedule: s_tir.Schedule  # the meaning-preserving steps as s_tir primitives (its trace)
    module: tvm.IRModule  # what is built: the schedule's module with the prefetches inserted


def schedule(report: SequenceReport, batch: int = 1) -> Scheduled:
    """The untransformed module, and the schedule of the sequence's meaning-preserving steps."""
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
    prefetches: dict = {}
    for nest, name in zip(program.parts, names):
        prefetches.update(_prefetches(sch, name, nest, _replay(sch, name, nest, events)))
    func = sch.mod["main"]
    if prefetches:
        func = func.with_body(_with_prefetches(func.body, prefetches))
    return Scheduled(mod, sch, tvm.IRModule({"main": func}))


def _replay(sch, block_name: str, nest: Nest, events: list[Event]) -> dict:
    """Apply the events that reached the part; -> its loops by the nest's names."""
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
    return rv


def _prefetches(sch, block_name: str, nest: Nest, rv: dict) -> dict:
    """loop variable -> the llvm.prefetch call its body starts with, for each loop of the part
    marked prefetch: the address of the input element its next iteration reads first (the
    loops inside it at their first iteration)."""
    block = sch.get_sblock(block_name)
    loops = [sch.get(sch.get_loops(block)[0]), *(sch.get(rv[loop.name]) for loop in nest.loops)]
    analyzer = tvm.sym.Analyzer()  # the loops' ranges make the indices readable (ci % 8 is ci)
    for loop in loops:
        analyzer.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent))
    batch, variables = loops[0].loop_var, [loop.loop_var for loop in loops[1:]]
    source = next(r.source for r in sch.get(block).reads if r.source.name in ("I_pad", "I"))
    calls = {}
    for k, marked in enumerate(nest.loops):
        if not marked.prefetch:
            continue
        values: dict = {}
        for j, (loop, var) in enumerate(zip(nest.loops, variables)):
            at = var if j < k else tirx.min(var + 1, loop.extent - 1) if j == k else 0
            inner = loop.extent
            for piece in loop.pieces:  # outermost first (fused loops: value // inner extents % own)
                inner //= piece.extent
                values[piece.iterator] = values.get(piece.iterator, 0) + (at // inner) % piece.extent * piece.stride
        index = [analyzer.simplify(i) for i in _read_index(nest.comp, batch, values)]
        calls[variables[k]] = _prefetch_call(source, index)
    return calls


def _read_index(c: Computation, batch, values: dict) -> list:
    """The input index the statement reads at these iterator values (the stage's axes are the
    group iterators' blocks joined to the output iterators, as the group's split made them)."""
    ext = c.extents()

    def axis(output: str, group: str):
        return values.get(group, 0) * ext[output] + values.get(output, 0)

    channel = _channel(c, axis("co", "g"), values.get("ci", 0))
    if not c.spatial:
        return [batch, channel]
    (row, col), _ = _window(
        c, _padding(c), axis("oh", "gh"), axis("ow", "gw"), values.get("kh", 0), values.get("kw", 0)
    )
    return [batch, channel, row, col]


def _prefetch_call(source, index: list):
    """llvm.prefetch(address, read (0), keep in every cache level (3), data (1))."""
    address = tirx.address_of(tirx.BufferLoad(source, index))
    return tirx.call_llvm_intrin("void", "llvm.prefetch.p0", address, 0, 3, 1)


def _with_prefetches(stmt, calls: dict):
    """The statement with each loop in `calls` starting its body with its call (s_tir has no
    primitive for it: the path to each loop is rebuilt, its blocks and loops kept as they were)."""
    if isinstance(stmt, tirx.For):
        body = _with_prefetches(stmt.body, calls)
        call = next((c for var, c in calls.items() if var.same_as(stmt.loop_var)), None)
        if call is not None:
            body = tirx.SeqStmt([tirx.Evaluate(call), body])
        return tirx.For(
            stmt.loop_var, stmt.min, stmt.extent, stmt.kind, body, stmt.thread_binding, stmt.annotations, stmt.step
        )
    if isinstance(stmt, tirx.SeqStmt):
        return tirx.SeqStmt([_with_prefetches(s, calls) for s in stmt.seq])
    if isinstance(stmt, s_tir.SBlockRealize):
        return s_tir.SBlockRealize(stmt.iter_values, stmt.predicate, _with_prefetches(stmt.block, calls))
    if isinstance(stmt, s_tir.SBlock):
        b = stmt
        body = _with_prefetches(b.body, calls)
        return s_tir.SBlock(
            b.iter_vars, b.reads, b.writes, b.name_hint, body, b.init, b.alloc_buffers, b.match_buffers, b.annotations
        )
    return stmt


def nest_extent(sch, loop) -> int:
    return int(sch.get(loop).extent)


# -- JSON entry points for worker processes -------------------------------------------------
def sequence_tvmscript(document: dict, bindings: Mapping[str, int] | None = None) -> str:
    """TVMScript of the scheduled PrimFunc."""
    return schedule(check_sequence(sequence_from_document(document), bindings)).module.script()
