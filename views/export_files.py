"""Writing an export: an operator (store id, file or the editor's document) or the results
store, in a format people use. One function, `export_files`, serves `tessera export` and the
export dialog, which runs it in a worker process through `export_call`.

Nothing heavy is imported at start-up: TVM formats run in a spawned process
(core.jobs.isolate), pictures import Qt when asked for, and an existing file is never
replaced without force."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from core.codegen.torch_plan import make_plan
from core.data.specs import DEFAULT_REPLACE, replace_kinds
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
from core.jobs.isolate import call_in_subprocess
from core.store import RESULT_OBJECTIVES, Store, default_store_path

DEFAULT_COLUMNS = "latency_ms,flops"
TVM_TIMEOUT_S = 900


def export_call(request: dict) -> list[str]:
    """export_files for core.jobs.isolate (JSON in, JSON out): the export dialog's worker."""
    return export_files(**request)


def preview_call(request: dict, model: str, input_shape: list[int]) -> list[str]:
    """What the torch-replace export of `request`'s operator would do to the user's model
    (core.networks.user_models.preview_call), exported to a temporary folder: the export
    dialog's worker (the model file runs here, never in the window's process)."""
    from core.networks.user_models import preview_call as replace_preview

    with tempfile.TemporaryDirectory() as folder:
        request = {**request, "fmt": "torch-replace", "out": f"{folder}/", "force": True}
        written = export_files(**request)
        kinds = list(replace_kinds(request.get("kinds") or DEFAULT_REPLACE))
        return replace_preview(written[0], model, input_shape, kinds)


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
    generic: bool = True,
    kinds: str | list[str] | tuple[str, ...] = DEFAULT_REPLACE,
) -> list[str]:
    """Write the export; -> the files written. The operator is `target` (id or file) or `document`.
    torch formats: `generic` a shape-generic module (else fixed at the sizes), `kinds` the
    convolutions replace_convs replaces by default."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    if FORMATS[fmt].subject == OPERATOR:
        shape = {"generic": generic, "kinds": replace_kinds(kinds)}
        return _export_operator(fmt, out, target, document, bindings or {}, store, force, batch, tuning_dir, shape)
    if target is not None or document is not None:
        raise ExportError(f"--format {fmt} exports the whole results store; give no ID or FILE")
    return _export_results(fmt, out, store, force, [c.strip() for c in columns.split(",") if c.strip()])


def _export_operator(fmt, out, target, document, bindings, store, force, batch, tuning_dir, shape) -> list[str]:
    if target is None and document is None:
        raise ExportError(f"--format {fmt} exports one operator: give its ID in the store or its FILE")
    if batch < 1:
        raise ExportError(f"--batch must be a positive integer, got {batch}")
    item = resolve(target, store, bindings) if target is not None else from_document(document, "the editor", bindings)
    paths = output_paths(fmt, out, item.name)
    refuse_overwrite(paths, force)
    if fmt in ("torch", "torch-replace"):
        source = torch_source(item, fmt == "torch-replace", None if shape["generic"] else False, shape["kinds"])
        return [str(write_text(paths[0], source))]
    if fmt == "json":
        return [str(write_text(paths[0], json.dumps(item.document, indent=2) + "\n"))]
    if fmt == "sequence":
        return [str(write_text(paths[0], json.dumps(item.require_sequence(), indent=2) + "\n"))]
    if fmt == "dot":
        return [str(write_text(paths[0], graph_dot(item)))]
    if fmt in ("png", "svg"):
        return [str(_pictures().save_graph_picture(item.graph, paths[0]))]
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
    if fmt != "csv" and (len(columns) != 2 or any(c not in RESULT_OBJECTIVES for c in columns)):
        raise ExportError(
            f"--columns takes two of {', '.join(RESULT_OBJECTIVES)}, e.g. {DEFAULT_COLUMNS}; "
            f"got {','.join(columns) or 'none'}"
        )
    paths = output_paths(fmt, out, "results" if fmt == "csv" else f"pareto_{columns[0]}_{columns[1]}")
    refuse_overwrite(paths, force)
    with Store(path, reading=True) as store:  # StoreMissing, naming the path, if there is none
        if store.reading_note():
            print(f"warning: {store.reading_note()}", file=sys.stderr)
        if fmt == "csv":
            return [str(write_text(paths[0], results_csv(store)))]
        if fmt == "pareto-csv":
            return [str(write_text(paths[0], pareto_csv(store, columns)))]
        return [str(_pictures().save_pareto_picture(store, columns, paths[0]))]


def _pictures():
    """views.pictures, imported when a picture is asked for (it needs Qt), with the process's
    QApplication ready to draw (offscreen, needing no display, when this process had none)."""
    from views import pictures

    pictures.drawing_application()
    return pictures
