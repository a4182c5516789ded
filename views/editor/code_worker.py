"""Runs in a spawned worker process (core.jobs.isolate): the current operator as
PyTorch and TVMScript source. It lives outside the GUI process so that torch
and TVM are never imported there; arguments and answer are plain JSON."""

from __future__ import annotations

from core.ir.serialize import graph_from_document
from core.jobs.code_paths import resolve
from core.jobs.errors import TargetError

GENERATORS = {
    "pytorch": "core.codegen.to_torch:module_source",
    "tvmscript": "core.codegen.to_tvm:tvmscript",
}


def generate(document: dict, bindings: dict, progress=None) -> dict:
    """{language: {"source": text} | {"error": message, "available": bool}} for every generator."""
    graph = graph_from_document(document, "<editor>")
    result = {}
    for i, (language, target) in enumerate(GENERATORS.items()):
        if progress is not None:
            progress(i / len(GENERATORS), language)  # also lets the caller cancel between steps
        try:
            function = resolve(target)
        except TargetError as e:
            result[language] = {"error": f"code generator not available: {e}", "available": False}
            continue
        try:
            result[language] = {"source": function(graph, dict(bindings))}
        except Exception as e:  # a generator's failure is shown in its tab; the other tab still works
            result[language] = {"error": f"{type(e).__name__}: {e}", "available": True}
    return result
