"""`tessera sequence show|apply|check`: loop-transformation sequences on the command line.

TVM and torch never load in this process: TVMScript, schedule verification and
Fisher Potential run in a spawned worker (core.jobs.isolate)."""

from __future__ import annotations

import json
import sys
from typing import Any

from core.analysis.legality import LEGAL, SequenceReport
from core.codegen.loopnest_ir import checked_sequence, result_operator
from core.codegen.loopnest_text import nest_lines, program_text
from core.ir.bindings import check_names, parse_bindings
from core.ir.loopnest import LoopNestError
from core.ir.sequence import load_sequence, sequence_document
from core.ir.serialize import save_operator
from core.jobs.isolate import call_in_subprocess

from . import options

_BADGE = {"legal": "ok", "illegal": "ILLEGAL", "error": "ERROR"}


def add_parsers(sub) -> None:
    p = sub.add_parser("sequence", help="loop-transformation sequences (NAS as program transformation)")
    seq = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    show = seq.add_parser("show", help="the loop nest before and after every step, with legality")
    _common(show)
    show.set_defaults(func=cmd_show)

    apply = seq.add_parser("apply", help="the transformed nest and the resulting operator's shapes and costs")
    _common(apply)
    apply.add_argument("--tvmscript", action="store_true", help="also print the scheduled TVM PrimFunc")
    apply.add_argument("--save-operator", metavar="OUT.json", help="write the resulting operator file")
    options.json_output(apply)
    apply.set_defaults(func=cmd_apply)

    check = seq.add_parser("check", help="legality of every step (exit 1 if any is illegal)")
    _common(check)
    check.add_argument(
        "--fisher", action="store_true", help="judge bottleneck/group steps by Fisher Potential on a backbone"
    )
    options.proxy_task(check, purpose="--fisher")
    check.add_argument(
        "--verify", action="store_true", help="compile the TVM schedule and compare it with the untransformed nest"
    )
    check.set_defaults(func=cmd_check)


def _common(p) -> None:
    p.add_argument("file", metavar="FILE")
    options.bind(p, "sizes such as C_in=64,C_out=64,H=56,W=56,K=3 (default: the file's)")


def _report(args) -> tuple[dict, dict, SequenceReport]:
    seq = load_sequence(args.file)
    bindings = parse_bindings(args.bind)
    check_names(bindings, seq.variables(), args.file)
    return sequence_document(seq), bindings, checked_sequence(seq, bindings)


def _step_line(index: int, text: str, status: str, message: str) -> str:
    return f"{index + 1:>3}. {text:<28} {_BADGE[status]:<9} {message}"


def cmd_show(args) -> int:
    _, _, report = _report(args)
    print(program_text(report.start).rstrip())
    for s in report.steps:
        print()
        print(_step_line(s.index, s.step.text(), s.status, s.message))
        if s.after is not None:
            for k, nest in enumerate(s.after.parts):
                if len(s.after.parts) > 1:
                    print(f"  # part {k}")
                print("\n".join("  " + line for line in nest_lines(nest)))
    return _verdict(report)


def cmd_apply(args) -> int:
    document, bindings, report = _report(args)
    if report.final is None:
        raise LoopNestError("; ".join(report.problems()))
    seq = report.sequence
    op = result_operator(report.final, seq.name or "sequence")
    if report.operator_problem:
        raise LoopNestError(f"the resulting operator cannot be built: {report.operator_problem}")
    parts = [
        {
            "channels": c,
            "output_shape": list(s.numeric_shapes["output"]) if s.numeric_shapes else None,
            "flops": str(s.cost.total("flops")),
            "params": str(s.cost.total("params")),
        }
        for c, s in zip(op.channels, op.summaries())
    ]
    data: dict[str, Any] = {
        "name": seq.name,
        "nest": program_text(report.final),
        "legal": report.legal,
        "problems": report.problems(),
        "parts": parts,
        "total": op.totals(),
    }
    if args.tvmscript:
        data["tvmscript"] = call_in_subprocess(
            "core.codegen.loopnest_tvm:sequence_tvmscript", {"document": document, "bindings": bindings}
        )
    if args.save_operator:
        save_operator(op.graph, args.save_operator)
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        print()
        return 0 if report.legal else 1
    print(data["nest"].rstrip())
    for line in report.problems():
        print(f"warning: {line}")
    for k, p in enumerate(parts):
        where = f"part {k}: " if len(parts) > 1 else ""
        print(f"{where}output {p['output_shape']}, FLOPs {p['flops']}, params {p['params']}")
    t = data["total"]
    print(f"total: {t['macs']:,} MACs, {t['flops']:,} FLOPs, {t['params']:,} params")
    if args.tvmscript:
        print(data["tvmscript"].rstrip())
    if args.save_operator:
        print(f"wrote {args.save_operator}")
    return 0 if report.legal else 1


def cmd_check(args) -> int:
    document, bindings, report = _report(args)
    failed = not report.legal
    for s in report.steps:
        print(_step_line(s.index, s.step.text(), s.status, s.message))
    if args.fisher and report.final is not None:
        settings = {
            "backbone": args.backbone,
            "dataset": args.dataset,
            "width": args.width,
            "resolution": args.resolution,
        }
        print(f"capacity (Fisher Potential on {args.backbone}, width {args.width}, {args.dataset}):")
        for r in call_in_subprocess(
            "core.train.capacity:capacity_checks", {"document": document, "bindings": bindings, "settings": settings}
        ):
            failed |= r["status"] != LEGAL
            print(_step_line(r["step"], r["text"], r["status"], r["message"]))
    if args.verify and report.final is not None and report.legal:
        result = call_in_subprocess(
            "core.compile.sequence_verify:verify_sequence", {"document": document, "bindings": bindings}
        )
        close = result["max_abs_error"] <= 1e-4 * max(1.0, result["scale"])
        failed |= not close
        print(
            f"TVM schedule vs untransformed nest: max abs error {result['max_abs_error']:.3g} "
            f"({'match' if close else 'MISMATCH'})"
        )
    return _verdict(report) or int(failed)


def _verdict(report) -> int:
    """1, saying why, when every step is legal but the operator they make cannot be built (its
    steps' lines show no fault); 1 for an illegal step (its line says why); else 0."""
    if report.operator_problem:
        print(f"error: the resulting operator cannot be built: {report.operator_problem}", file=sys.stderr)
    return 0 if report.legal else 1
