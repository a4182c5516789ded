"""TVMScript and a compiled shared library of an operator, the library with a loader script.

Runs in a worker process (it imports TVM): the CLI and the export dialog call
`tvmscript_call` and `library_call` through core.jobs.isolate with the operator's
document. The library is built for this machine's CPU from the operator's canonical
form, the form `tessera measure` tunes, so when this machine has tuned the operator at
these sizes the library holds the best schedule found (else the untuned kernel). Its
loader takes the weights by the names of the exported PyTorch module's state_dict."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import tvm

from core.codegen.to_tvm import Lowered, lower
from core.codegen.torch_plan import weight_names
from core.compile.target import core_count, local_target
from core.compile.tune import tune, tuning_dir
from core.ir.graph import OperatorGraph
from core.ir.serialize import canonical_graph, content_hash, graph_from_document

from .errors import ExportError
from .names import docstring_text
from .outputs import check_library_name, write_text, write_with

_LOADER = '''"""Run the compiled kernel of operator {name} (exported by Tessera).

{library} holds one function, "main", built for {cpu} ({tuned}).
It needs only TVM's runtime (pip install apache-tvm=={tvm_version}) and numpy.
main(x, *weights, y) reads x {input_shape} and the weights below (float32, in this order)
and writes y {output_shape}.

    python {loader}  # one run on random data, and its time
    from {module} import load
    run = load()
    y = run(x, {{"w_name": w, ...}})  # weights by the exported PyTorch module's state_dict keys
"""
import pathlib
import time

import numpy as np
import tvm

LIBRARY = pathlib.Path(__file__).with_name({library!r})
INPUT_SHAPE = {input_tuple}
OUTPUT_SHAPE = {output_tuple}
WEIGHTS = {weights}  # (state_dict key, shape), in argument order


def load(path=LIBRARY):
    """-> run(x, weights): numpy in, numpy out."""
    main = tvm.runtime.load_module(str(path))["main"]
    device = tvm.cpu()

    def tensor(name, value, shape):
        value = np.ascontiguousarray(value, dtype="float32")
        if value.shape != shape:
            raise ValueError(f"{{name}} has shape {{value.shape}}, the kernel needs {{shape}}")
        return tvm.runtime.tensor(value, device)

    def run(x, weights):
        missing = [name for name, _ in WEIGHTS if name not in weights]
        if missing:
            raise KeyError(f"missing weights: {{', '.join(missing)}}")
        y = tvm.runtime.empty(OUTPUT_SHAPE, "float32", device)
        main(tensor("x", x, INPUT_SHAPE), *(tensor(n, weights[n], s) for n, s in WEIGHTS), y)
        return y.numpy()
    return run


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    run = load()
    x = rng.standard_normal(INPUT_SHAPE, dtype=np.float32)
    weights = {{n: rng.standard_normal(s, dtype=np.float32) for n, s in WEIGHTS}}
    run(x, weights)
    start = time.perf_counter()
    y = run(x, weights)
    print(f"output {{y.shape}} in {{(time.perf_counter() - start) * 1e3:.3f}} ms")
'''


_TVMSCRIPT = '''"""Operator {name} as TVMScript, exported by Tessera: the PrimFunc `main` of `Module`
reads x {input_shape} and the weights ({weights}), float32, and writes y {output_shape}.

    python {stem}.py  # builds Module for this CPU and runs it once on random data
    from {stem} import Module
    main = tvm.compile(Module, target="llvm")["main"]  # main(x, *weights, y) on tvm.runtime tensors
"""

{imports}


{script}


if __name__ == "__main__":
    import numpy as np
    import tvm

    rng = np.random.default_rng(0)
    main = tvm.compile(Module, target="llvm")["main"]
    arguments = [tvm.runtime.tensor(rng.standard_normal(shape, dtype=np.float32)) for shape in {shapes}]
    y = tvm.runtime.empty({output}, "float32", tvm.cpu())
    main(*arguments, y)
    print(f"main ran: y {{list(y.shape)}}, mean {{y.numpy().mean():.6f}}")
'''


def tvmscript_call(document: dict, bindings: dict, batch: int, out: str) -> list[str]:
    """Write the operator's PrimFunc as TVMScript (what `tessera codegen --target tvmscript`
    prints) in a file that runs: its imports live, and run as a script it builds the module
    for this CPU and runs it once on random data."""
    graph = graph_from_document(document)
    lowered = lower(graph, bindings, batch)
    script = lowered.module().script()
    imports = [line[2:] for line in script.splitlines() if line.startswith("# from tvm")]
    body = "\n".join(line for line in script.splitlines() if not line.startswith("# from tvm"))
    text = _TVMSCRIPT.format(
        name=docstring_text(graph.name or "operator"),
        stem=Path(out).stem,
        input_shape=list(lowered.input_shape),
        output_shape=list(lowered.output_shape),
        weights=", ".join(f"{w.name} {list(w.shape)}" for w in lowered.weights) or "none",
        imports="\n".join(imports),
        script=body.strip("\n"),
        shapes=[lowered.input_shape, *(w.shape for w in lowered.weights)],
        output=lowered.output_shape,
    )
    return [str(write_text(Path(out), text))]


def library_call(
    document: dict, bindings: dict, batch: int, out: str, loader: str, tuning_root: str | None = None
) -> dict:
    """Build the operator for this CPU, export it to `out` (a .so) and write the loader script.
    -> {"files": [library, loader], "tuned": bool}."""
    check_library_name(Path(out))
    graph = graph_from_document(document)
    canonical = canonical_graph(graph)
    lowered = lower(canonical, {**graph.bindings, **bindings}, batch)
    target = local_target(core_count())
    schedule = _tuned_schedule(lowered, graph, target, Path(tuning_root) if tuning_root else None)
    try:
        executable = tvm.compile(schedule if schedule is not None else lowered.module(), target=target)
    except (RuntimeError, ValueError) as e:
        raise ExportError(f"{graph.name or 'the operator'}: TVM could not build the kernel: {e}") from None
    library = write_with(Path(out), lambda tmp: executable.export_library(str(tmp)))
    renamed = _original_names(graph, canonical)
    weights = tuple((renamed[w.name], w.shape) for w in lowered.weights)
    text = _LOADER.format(
        name=docstring_text(graph.name or "operator"),
        library=library.name,
        loader=Path(loader).name,
        module=Path(loader).stem,
        cpu=str(target.attrs.get("mcpu", "this CPU")),
        tvm_version=tvm.__version__.split("+")[0],
        tuned="tuned: the best schedule this machine found"
        if schedule is not None
        else "untuned: run `tessera measure --tune-trials N` first for a tuned kernel",
        input_shape=list(lowered.input_shape),
        output_shape=list(lowered.output_shape),
        input_tuple=lowered.input_shape,
        output_tuple=lowered.output_shape,
        weights=weights,
    )
    return {"files": [str(library), str(write_text(Path(loader), text))], "tuned": schedule is not None}


def _tuned_schedule(lowered: Lowered, graph: OperatorGraph, target, root: Path | None):
    """The best schedule recorded by `tessera measure` for this operator at these sizes on the
    local device, or None. Never tunes: an unknown operator leaves no folder behind."""
    work_dir = tuning_dir(content_hash(graph), {**lowered.plan.bindings, "N": lowered.batch}, "local", root)
    if not work_dir.is_dir():
        return None
    return tune(lowered.module(), target, work_dir, trials=0).schedule


def _original_names(graph: OperatorGraph, canonical: OperatorGraph) -> dict[str, str]:
    """Canonical weight name (w_n3) -> the same weight's name in the user's graph (w_share),
    by matching the two graphs node for node (they are isomorphic by construction)."""

    def labelled(g: OperatorGraph) -> nx.DiGraph:
        h = nx.DiGraph()
        for n in g.g.nodes:
            prim = g.prim(n)
            h.add_node(n, label=n if prim is None else json.dumps([prim.op, prim.params], sort_keys=True))
        h.add_edges_from((u, v, {"port": p}) for u, v, p in g.edges())
        return h

    matcher = nx.algorithms.isomorphism.DiGraphMatcher(
        labelled(canonical),
        labelled(graph),
        node_match=lambda a, b: a["label"] == b["label"],
        edge_match=lambda a, b: a["port"] == b["port"],
    )
    mapping = next(matcher.isomorphisms_iter(), None)
    if mapping is None:  # cannot happen for a document and its canonical form
        raise ExportError(f"{graph.name or 'the operator'}: its canonical form does not match it")
    original = weight_names(graph)
    return {name: original[mapping[node]] for node, name in weight_names(canonical).items()}
