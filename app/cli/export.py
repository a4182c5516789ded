"""`tessera export`: an operator (store id or file) or the results store, in a format people
use, written by views.export_files (which the export dialog runs too); pictures import Qt
only when asked for, and an existing file is never replaced without --force."""

from __future__ import annotations

from core.export import FORMATS
from core.ir.bindings import parse_bindings
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
        "--columns",
        default=DEFAULT_COLUMNS,
        metavar="X,Y",
        help=f"the two objectives of pareto-* formats (default {DEFAULT_COLUMNS})",
    )
    p.set_defaults(func=cmd_export)


def cmd_export(args) -> int:
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
    )
    for path in written:
        print(f"wrote {path}")
    return 0
