"""`tessera codegen`: an operator as PyTorch or TVMScript code. TVMScript comes from a
spawned process (core.jobs.isolate): this one never imports TVM."""

from __future__ import annotations

from core.codegen import module_source
from core.codegen.torch_plan import make_plan
from core.jobs.isolate import call_in_subprocess

from . import options
from .inputs import operator_and_bindings


def add_parsers(sub) -> None:
    p = sub.add_parser("codegen", help="print an operator as PyTorch or TVMScript code")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--target", choices=("torch", "tvmscript"), default="torch")
    options.bind(p)
    p.add_argument("--batch", type=int, default=1, help="batch size N of the TVM function (default 1)")
    p.set_defaults(func=cmd_codegen)


def cmd_codegen(args) -> int:
    document, graph, bindings = operator_and_bindings(args.file, args.bind)
    if args.target == "torch":
        print(module_source(graph, bindings), end="")
        return 0
    make_plan(graph, bindings)  # shape and binding errors, before spawning TVM
    print(
        call_in_subprocess(
            "core.compile.handlers:tvmscript_call", {"operator": document, "bindings": bindings, "batch": args.batch}
        )
    )
    return 0
