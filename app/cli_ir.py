"""`tessera validate` and `tessera info`: the IR on the command line."""

from __future__ import annotations

import json
import sys

from app.cli_inputs import operator_and_bindings
from core.analysis.summary import Summary, summarize
from core.ir.bindings import parse_bindings
from core.ir.errors import TesseraError
from core.ir.serialize import load_operator


def add_parsers(sub) -> None:
    p = sub.add_parser("validate", help="check operator files (shapes, dynamic variables)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--bind", default="", help="values such as C_in=64,H=56 (default: the file's own)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("info", help="shapes, FLOPs/MACs and parameters per node and in total")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--bind", default="", help="values such as C_in=64,C_out=64,H=56,W=56,K=3")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_info)


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
            for line in _messages(s):
                print(f"  {line}")
    return 1 if failed else 0


def cmd_info(args) -> int:
    _, graph, bindings = operator_and_bindings(args.file, args.bind)
    s = summarize(graph, bindings)
    if args.json:
        json.dump(s.to_json(), sys.stdout, indent=2)
        print()
        return 0 if s.ok else 1
    data = s.to_json()
    print(
        f"{args.file}: {data['input_shape']} -> {data['output_shape']}"
        + (f"  with {', '.join(f'{k}={v}' for k, v in s.bindings.items())}" if s.bindings else "")
    )
    rows = [("node", "op", "shape", "numeric", "MACs", "FLOPs", "params")]
    for n in data["nodes"]:
        rows.append(
            (
                n["id"],
                n["op"],
                n["shape"] or "-",
                str(n.get("shape_numeric", "")),
                _num(n, "macs"),
                _num(n, "flops"),
                _num(n, "params"),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    t = data["total"]
    for f, label in (("macs", "MACs"), ("flops", "FLOPs"), ("params", "params")):
        value = f" = {t[f + '_value']:,}" if f + "_value" in t else ""
        print(f"total {label}: {t[f]}{value}")
    for line in _messages(s):
        print(line)
    return 0 if s.ok else 1


def _messages(summary: Summary) -> list[str]:
    """The summary's messages, with how to give the missing sizes on the command line."""
    hint = [f"hint: pass e.g. --bind {summary.unbound[0]}=..."] if summary.binding_error and summary.unbound else []
    return summary.messages() + hint


def _num(node: dict, field: str) -> str:
    if f"{field}_value" in node:
        return f"{node[f'{field}_value']:,}"
    return node.get(field, "")
