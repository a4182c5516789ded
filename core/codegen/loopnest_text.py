"""A transformed loop nest as readable Python-like pseudo-code.

Loops print as `for co_o in range(8):`, annotated ones as `parallel(8)`,
`vectorized(8)` or `unrolled(3)`, one that prefetches with a comment saying so. Iterators that are no longer a single loop
are defined just above the statement (`co = co_o*8 + co_i`), so the statement
keeps the form of the original nest."""

from __future__ import annotations

from ..ir.loopnest import Loop, Nest, Program

_INDENT = "  "
_RANGE = {None: "range", "parallel": "parallel", "vectorize": "vectorized", "unroll": "unrolled"}
_PREFETCH = "  # prefetch: first fetch the input the next iteration reads"


def program_text(program: Program) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in program.bindings)
    lines = [f"# {program.base} at {sizes}"]
    many = len(program.parts) > 1
    for k, nest in enumerate(program.parts):
        c = nest.comp
        if many:
            lines.append(f"# part {k}: output channels {c.out_start}..{c.out_start + c.out_count - 1}")
        lines += nest_lines(nest, weight=f"W{k}" if many else "W")
    return "\n".join(lines) + "\n"


def nest_lines(nest: Nest, weight: str = "W") -> list[str]:
    acc = nest.comp.accesses(weight)
    lines = [
        _INDENT * depth
        + f"for {loop.name} in {_RANGE[loop.annotation]}({loop.extent}):"
        + (_PREFETCH if loop.prefetch else "")
        for depth, loop in enumerate(nest.loops)
    ]
    body = _INDENT * len(nest.loops)
    lines += [body + d for d in definitions(nest)]
    lines.append(body + acc.statement + (f"  # {acc.clip}, else 0" if acc.clip else ""))
    if acc.copy:
        lines.append(f"{acc.copy}  # for every output element: each computed value is repeated")
    return lines


def definitions(nest: Nest) -> list[str]:
    """Iterator values in terms of the loops, for iterators that are not one plain loop."""
    terms: dict[str, list[tuple[int, str]]] = {}
    for loop in nest.loops:
        for k, piece in enumerate(loop.pieces):
            value = _piece_value(loop, k)
            if piece.stride > 1:
                value = f"({value})*{piece.stride}" if " " in value else f"{value}*{piece.stride}"
            terms.setdefault(piece.iterator, []).append((piece.stride, value))
    out = []
    for iterator, values in terms.items():
        texts = [text for _, text in sorted(values, key=lambda v: -v[0])]
        if texts != [iterator]:
            out.append(f"{iterator} = {' + '.join(texts)}")
    return out


def _piece_value(loop: Loop, k: int) -> str:
    """The k-th piece of a (possibly fused) loop: f // inner extents % own extent."""
    inner = 1
    for p in loop.pieces[k + 1 :]:
        inner *= p.extent
    text = loop.name if inner == 1 else f"{loop.name} // {inner}"
    if k > 0:
        text = f"({text}) % {loop.pieces[k].extent}" if inner > 1 else f"{text} % {loop.pieces[k].extent}"
    return text
