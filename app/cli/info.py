"""`tessera info`: shapes, FLOPs/MACs and parameters per node and in total."""

from __future__ import annotations

import json
import sys

from core.analysis.summary import Summary, summarize

from . import options
from .inputs import operator_and_bindings
from .reports import print_table


def add_parsers(sub) -> None:
    p = sub.add_parser("info", help="shapes, FLOPs/MACs and parameters per node and in total")
    p.add_argument("file", metavar="FILE")
    options.bind(p, "values such as C_in=64,C_out=64,H=56,W=56,K=3")
    options.json_output(p)
    p.set_defaults(func=cmd_info)


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
    print_table(rows)
    t = data["total"]
    for f, label in (("macs", "MACs"), ("flops", "FLOPs"), ("params", "params")):
        value = f" = {t[f + '_value']:,}" if f + "_value" in t else ""
        print(f"total {label}: {t[f]}{value}")
    for line in summary_messages(s):
        print(line)
    return 0 if s.ok else 1


def summary_messages(summary: Summary) -> list[str]:
    """The summary's messages, with how to give the missing sizes on the command line."""
    hint = [f"hint: pass e.g. --bind {summary.unbound[0]}=..."] if summary.binding_error and summary.unbound else []
    return summary.messages() + hint


def _num(node: dict, field: str) -> str:
    if f"{field}_value" in node:
        return f"{node[f'{field}_value']:,}"
    return node.get(field, "")
