"""`tessera validate`: check operator files (shapes, dynamic variables)."""

from __future__ import annotations

from core.analysis.summary import summarize
from core.errors import TesseraError
from core.ir.bindings import parse_bindings
from core.ir.serialize import load_operator

from . import options
from .info import summary_messages


def add_parsers(sub) -> None:
    p = sub.add_parser("validate", help="check operator files (shapes, dynamic variables)")
    p.add_argument("files", nargs="+", metavar="FILE")
    options.bind(p)
    p.set_defaults(func=cmd_validate)


def cmd_validate(args) -> int:
    bindings = parse_bindings(args.bind)
    failed = 0
    for path in args.files:
        try:
            graph = load_operator(path)
        except TesseraError as e:
            print(f"INVALID {e}")
            failed += 1
            continue
        s = summarize(graph, bindings)
        if s.ok:
            flops = f", {s.numeric_cost['flops'] / 1e6:.1f} MFLOPs" if s.numeric_cost else ""
            pending = f", {len(s.shapes.constraints)} dynamic variable(s) to solve" if s.shapes.constraints else ""
            print(
                f"ok {path}: {graph.input_type()} -> {s.shapes.output}, "
                f"{len(graph.primitive_nodes())} primitives{flops}{pending}"
            )
        else:
            failed += 1
            print(f"INVALID {path}:")
            for line in summary_messages(s):
                print(f"  {line}")
    return 1 if failed else 0
