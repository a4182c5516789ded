"""What commands that take one operator FILE and --bind (and, to transfer-tune, --from)
read first, checked the same way."""

from __future__ import annotations

from pathlib import Path

from core.ir.bindings import check_names, parse_bindings
from core.ir.errors import TesseraError
from core.ir.graph import OperatorGraph
from core.ir.serialize import read_operator


def operator_and_bindings(path: str, bind: str) -> tuple[dict, OperatorGraph, dict[str, int]]:
    """The operator file's document and graph, and the --bind values, which must name
    variables the operator has (a typo would otherwise leave the file's own size in use)."""
    document, graph = read_operator(path)
    bindings = parse_bindings(bind)
    check_names(bindings, graph.kinds(), path)
    return document, graph, bindings


def transfer_sources(sources, transfer: bool, off: str = "add --transfer") -> list[str]:
    """The --from paths (tuning folders or results stores) resolved, each existing, and only
    with transfer-tuning on, which they are for (`off`: how to turn it on, for the error)."""
    if sources and not transfer:
        raise TesseraError(f"--from names where transfer-tuning takes schedules from; {off}")
    for path in sources or ():
        if not Path(path).expanduser().exists():
            raise TesseraError(f"--from {path}: no such tuning folder or results store")
    return [str(Path(p).expanduser().resolve()) for p in sources or ()]
