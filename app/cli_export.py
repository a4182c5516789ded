"""`tessera export`: an operator (store id or file) or the results store, in a format people use.

The same `export_files` serves the CLI and the export dialog (which runs it in a worker
process through `export_call`). Nothing heavy is imported at start-up: TVM formats run
in a spawned process (core.jobs.isolate), pictures import Qt when asked for, and an
existing file is never replaced without --force."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from core.codegen.torch_plan import make_plan
from core.export import (
    FORMATS,
    OPERATOR,
    ExportError,
    from_document,
    graph_dot,
    output_paths,
    pareto_csv,
    refuse_overwrite,
    resolve,
    results_csv,
    torch_source,
    write_text,
)
from core.ir.bindings import parse_bindings
from core.jobs.isolate import call_in_subprocess
from core.store import RESULT_OBJECTIVES, Store, default_store_path

DEFAULT_COLUMNS = "latency_ms,flops"
TVM_TIMEOUT_S = 900


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
    p.add_argument(
        "--bind",
        default="",
        help="sizes such as C_in=64,H=56 (default: the file's own, or the stored operator's latest measurement)",
    )
    p.add_argument("--store", metavar="PATH", help="results store (default: $TESSERA_STORE or ~/.local/share)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.add_argument("--batch", type=int, default=1, help="batch size N of tvmscript and library (default 1)")
    p.add_argument(
        "--tuning-dir",
        metavar="DIR",
        help="tuning databases a library takes its schedule from (default ~/.cache/tessera/tuning)",
    )
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


def export_call(request: dict) -> list[str]:
    """export_files for core.jobs.isolate (JSON in, JSON out): the export dialog's worker."""
    return export_files(**request)


def export_files(
    fmt: str,
    out: str,
    *,
    target: str | None = None,
    document: dict | None = None,
    bindings: dict | None = None,
    store: str | None = None,
    force: bool = False,
    batch: int = 1,
    columns: str = DEFAULT_COLUMNS,
    tuning_dir: str | None = None,
) -> list[str]:
    """Write the export; -> the files written. The operator is `target` (id or file) or `document`."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    if FORMATS[fmt].subject == OPERATOR:
        return _export_operator(fmt, out, target, document, bindings or {}, store, force, batch, tuning_dir)
    if target is not None or document is not None:
        raise ExportError(f"--format {fmt} exports the whole results store; give no ID or FILE")
    return _export_results(fmt, out, store, force, [c.strip() for c in columns.split(",") if c.strip()])


def _export_operator(fmt, out, target, document, bindings, store, force, batch, tuning_dir) -> list[str]:
    if target is None and document is None:
        raise ExportError(f"--format {fmt} exports one operator: give its ID in the store or its FILE")
    if batch < 1:
        raise ExportError(f"--batch must be a positive integer, got {batch}")
    item = resolve(target, store, bindings) if target is not None else from_document(document, "the editor", bindings)
    paths = output_paths(fmt, out, item.name)
    refuse_overwrite(paths, force)
    if fmt in ("torch", "torch-replace"):
        return [str(write_text(paths[0], torch_source(item, replace_helper=fmt == "torch-replace")))]
    if fmt == "json":
        return [str(write_text(paths[0], json.dumps(item.document, indent=2) + "\n"))]
    if fmt == "sequence":
        return [str(write_text(paths[0], json.dumps(item.require_sequence(), indent=2) + "\n"))]
    if fmt == "dot":
        return [str(write_text(paths[0], graph_dot(item)))]
    if fmt in ("png", "svg"):
        _application()
        from views.pictures import save_graph_picture

        return [str(save_graph_picture(item.graph, paths[0]))]
    return _export_tvm(fmt, item, paths, batch, tuning_dir)


def _export_tvm(fmt, item, paths, batch, tuning_dir) -> list[str]:
    """TVMScript or a library, built in a spawned process (this one never imports TVM)."""
    item.require_sizes()
    make_plan(item.graph)  # shape and size errors here, before spawning TVM
    request = {"document": item.document, "bindings": item.bindings, "batch": batch, "out": str(paths[0])}
    if fmt == "tvmscript":
        return call_in_subprocess("core.export.tvm_export:tvmscript_call", request, timeout=TVM_TIMEOUT_S)
    root = str(Path(tuning_dir).expanduser().resolve()) if tuning_dir else None
    result = call_in_subprocess(
        "core.export.tvm_export:library_call",
        {**request, "loader": str(paths[1]), "tuning_root": root},
        timeout=TVM_TIMEOUT_S,
    )
    if not result["tuned"]:
        print(
            f"note: {item.name} has not been tuned on this machine at these sizes; the library holds the "
            "untuned kernel (tune with `tessera measure --tune-trials N`)",
            file=sys.stderr,
        )
    return result["files"]


def _export_results(fmt, out, store_path, force, columns) -> list[str]:
    path = Path(store_path).expanduser() if store_path else default_store_path()
    if not path.is_file():
        raise ExportError(f"no results store at {path} (pass --store PATH)")
    if fmt != "csv" and (len(columns) != 2 or any(c not in RESULT_OBJECTIVES for c in columns)):
        raise ExportError(
            f"--columns takes two of {', '.join(RESULT_OBJECTIVES)}, e.g. {DEFAULT_COLUMNS}; "
            f"got {','.join(columns) or 'none'}"
        )
    paths = output_paths(fmt, out, "results" if fmt == "csv" else f"pareto_{columns[0]}_{columns[1]}")
    refuse_overwrite(paths, force)
    with Store(path) as store:
        if store.salvage_note():
            print(f"warning: {store.salvage_note()}", file=sys.stderr)
        if fmt == "csv":
            return [str(write_text(paths[0], results_csv(store)))]
        if fmt == "pareto-csv":
            return [str(write_text(paths[0], pareto_csv(store, columns)))]
        _application()
        from views.pictures import save_pareto_picture

        return [str(save_pareto_picture(store, columns, paths[0]))]


def _application():
    """The process's QApplication for drawing pictures; a new one never needs a display."""
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from app.gui import application

    return application()
