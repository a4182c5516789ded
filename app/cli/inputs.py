"""What commands that take one operator FILE (or, to measure, a sequence FILE) and --bind
(and, to transfer-tune, --from; to search, --template) read first, checked the same way."""

from __future__ import annotations

from pathlib import Path

from core.codegen.loopnest_ir import checked_sequence, result_operator
from core.errors import TesseraError
from core.ir.bindings import check_names, parse_bindings
from core.ir.documents import document_kind
from core.ir.graph import OperatorGraph
from core.ir.sequence import load_sequence, sequence_document
from core.ir.serialize import read_operator, to_document
from resources import EXAMPLES


def operator_and_bindings(path: str, bind: str) -> tuple[dict, OperatorGraph, dict[str, int]]:
    """The operator file's document and graph, and the --bind values, which must name
    variables the operator has (a typo would otherwise leave the file's own size in use)."""
    document, graph = read_operator(path)
    bindings = parse_bindings(bind)
    check_names(bindings, graph.kinds(), path)
    return document, graph, bindings


def measured_operator(path: str, bind: str) -> tuple[dict, OperatorGraph, dict[str, int], dict | None]:
    """operator_and_bindings for an operator file; for a sequence file, the operator its steps
    make at the --bind sizes, the sizes, and the sequence's document (whose schedule can then
    be timed). A sequence with a step that does not apply or is illegal at those sizes is refused."""
    if document_kind(path) == "operator":
        return (*operator_and_bindings(path, bind), None)
    seq = load_sequence(path)
    bindings = parse_bindings(bind)
    check_names(bindings, seq.variables(), path)
    report = checked_sequence(seq, bindings)
    if report.final is None or not report.legal:
        raise TesseraError(f"{path}: the sequence cannot be measured: {'; '.join(report.problems())}")
    graph = result_operator(report.final, seq.name or Path(path).stem).graph
    return to_document(graph), graph, {}, sequence_document(seq)


def transfer_sources(sources, transfer: bool, off: str = "add --transfer") -> list[str]:
    """The --from paths (tuning folders or results stores) resolved, each existing, and only
    with transfer-tuning on, which they are for (`off`: how to turn it on, for the error)."""
    if sources and not transfer:
        raise TesseraError(f"--from names where transfer-tuning takes schedules from; {off}")
    for path in sources or ():
        if not Path(path).expanduser().exists():
            raise TesseraError(f"--from {path}: no such tuning folder or results store")
    return [str(Path(p).expanduser().resolve()) for p in sources or ()]


def template_path(name: str) -> Path:
    """--template: an example's name (conv2d) or an operator file."""
    path = Path(name)
    if path.suffix == ".json" or path.exists():
        return path
    return EXAMPLES / f"{name}.json"
