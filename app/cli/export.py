"""`tessera export`: an operator (store id or file) or the results store, in a format people
use, written by views.export_files (which the export dialog runs too); pictures import Qt
only when asked for, and an existing file is never replaced without --force."""

from __future__ import annotations

from core.data.specs import replace_kinds
from core.export import FORMATS, ExportError
from core.ir.bindings import parse_bindings
from core.jobs.isolate import call_in_subprocess
from core.networks.user_models import ModelRef, parse_input
from views.export_files import DEFAULT_COLUMNS, export_files

from . import options


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "export",
        help="write an operator or the results as code, a library, a picture or CSV",
        description="Export operator ID (from the results store) or FILE, or the whole store "
        "(formats csv, pareto-*). Formats: " + "; ".join(f"{f.name}: {f.description}" for f in FORMATS.values()),
    )
    p.add_argument("target", nargs="?", metavar="ID|FILE", help="operator id in the store, or an operator file")
    p.add_argument("--format", required=True, choices=list(FORMATS), dest="fmt")
    p.add_argument(
        "--out",
        default=".",
        metavar="PATH",
        help="file to write, or a folder (gets a file named after the operator); default: here",
    )
    options.bind(p, "sizes such as C_in=64,H=56 (default: the file's own, or the stored operator's latest measurement)")
    options.store(p)
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.add_argument("--batch", type=int, default=1, help="batch size N of tvmscript and library (default 1)")
    options.tuning_dir(p, "tuning databases a library takes its schedule from (default ~/.cache/tessera/tuning)")
    p.add_argument(
        "--fixed-sizes",
        action="store_true",
        help="torch: a module fixed at the --bind sizes (default: shape-generic, sizes given at construction)",
    )
    options.replace(p)
    p.add_argument(
        "--model",
        metavar="FILE.py:FUNCTION",
        default=None,
        help="torch-replace: after writing, say what replace_convs does to your model (built by FUNCTION in "
        "FILE.py, in a worker process) with --replace's kinds",
    )
    p.add_argument("--input", default="3,224,224", metavar="C,H,W", help="the example input --model is run on")
    p.add_argument(
        "--columns",
        default=DEFAULT_COLUMNS,
        metavar="X,Y",
        help=f"the two objectives of pareto-* formats (default {DEFAULT_COLUMNS})",
    )
    p.set_defaults(func=cmd_export)


def cmd_export(args) -> int:
    if args.model:
        if args.fmt != "torch-replace":
            raise ExportError("--model shows what replace_convs does: it goes with --format torch-replace")
        ModelRef.parse(args.model)
        shape = parse_input(args.input)
    written = export_files(
        args.fmt,
        args.out,
        target=args.target,
        bindings=parse_bindings(args.bind),
        store=args.store,
        force=args.force,
        batch=args.batch,
        columns=args.columns,
        tuning_dir=args.tuning_dir,
        generic=not args.fixed_sizes,
        kinds=args.replace,
    )
    for path in written:
        print(f"wrote {path}")
    if args.model:
        request = {"exported": written[0], "model": args.model, "input_shape": list(shape)}
        for line in call_in_subprocess(
            "core.networks.user_models:preview_call", {**request, "kinds": list(replace_kinds(args.replace))}
        ):
            print(line)
    return 0
