"""The operator an export is about, from a results store (by id), a file, or a document.

Whatever the source, an export sees a laid-out graph with its name, the sizes to generate
code at, and one line saying where the operator came from (for docstrings). The store
keeps operators in canonical form (no name, positions or sizes), so an operator from the
store takes its name from its row, a layered layout, and the sizes of its latest
measurement, each overridden by what the caller passes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from core.ir.bindings import check_names
from core.ir.graph import OperatorGraph
from core.ir.layout import lay_out_if_stacked
from core.ir.serialize import content_hash, graph_from_document, read_document, to_document
from core.store import Store, StoreError, StoreMissing, default_store_path

from .errors import ExportError


@dataclass(frozen=True)
class Exportable:
    graph: OperatorGraph  # laid out; its bindings are the export's sizes
    origin: str  # e.g. "file conv2d.json" or "operator 12 (search:mcts) in results store ..."
    content_hash: str
    sequence: dict | None = None  # the transformation sequence a search found it by (store only)

    @property
    def name(self) -> str:
        return self.graph.name or "operator"

    @property
    def bindings(self) -> dict[str, int]:
        return dict(self.graph.bindings)

    @property
    def document(self) -> dict:
        """The full operator document: name, positions and the export's sizes."""
        return to_document(self.graph)

    def require_sequence(self) -> dict:
        """The sequence it was found by, or an ExportError saying it has none."""
        if self.sequence is None:
            raise ExportError(
                f"{self.name} ({self.origin}) was not found by a transformation sequence; "
                "only operators a sequence search found in a results store have one"
            )
        return self.sequence

    def require_sizes(self) -> None:
        """Code needs every size: ExportError naming the unbound variables."""
        missing = sorted(self.graph.mentioned_variables() - set(self.graph.bindings))
        if missing:
            raise ExportError(
                f"{self.name} ({self.origin}) has no size for {', '.join(missing)}; "
                f"pass e.g. --bind {','.join(f'{v}=...' for v in missing)}"
            )


def from_document(
    document: dict,
    origin: str,
    bindings: Mapping[str, int] | None = None,
    name: str | None = None,
    source: str = "<document>",
) -> Exportable:
    """Check the document (FormatError names the element at fault) and apply name and sizes."""
    graph = graph_from_document(document, source)
    identity = content_hash(graph)
    if name:
        graph.set_declaration(name=name)
    graph.bindings = {**graph.bindings, **(bindings or {})}
    lay_out_if_stacked(graph)
    return Exportable(graph, origin, identity)


def from_file(path: str | Path, bindings: Mapping[str, int] | None = None) -> Exportable:
    """The operator of a file at `bindings`: a BindingError names a variable it does not have
    (with a suggestion, as `tessera info` says it)."""
    path = Path(path)
    document = read_document(path)
    _check_names(document, bindings, str(path))
    return from_document(document, f"file {path.name}", bindings, source=str(path))


def _check_names(document: dict, bindings: Mapping[str, int] | None, owner: str) -> None:
    check_names(dict(bindings or {}), graph_from_document(document, owner).kinds(), owner)


def from_store(
    store_path: str | Path | None, operator_id: int, bindings: Mapping[str, int] | None = None
) -> Exportable:
    path = Path(store_path).expanduser() if store_path else default_store_path()
    try:
        store = Store(path, reading=True)
    except StoreMissing:
        raise ExportError(f"no results store at {path} (pass --store PATH)") from None
    with store:
        try:
            row = store.operator(operator_id)
        except StoreError:
            raise ExportError(f"no operator {operator_id} in results store {path}") from None
        sequence = store.operator_sequence(operator_id)
        measured = next(
            iter(
                store.results(
                    "operator_id = ? AND measurement_id IS NOT NULL",
                    [operator_id],
                    order_by="created DESC, measurement_id DESC",
                )
            ),
            None,
        )
    _check_names(row["document"], bindings, f"operator {operator_id} of {path.name}")
    sizes = json.loads(measured["bindings"]) if measured and measured["bindings"] else {}
    origin = f"operator {operator_id} ({row['origin'] or 'unknown origin'}) in results store {path.name}"
    item = from_document(
        row["document"],
        origin,
        {**sizes, **(bindings or {})},
        name=row["name"] or f"operator {operator_id}",
        source=f"{path} operator {operator_id}",
    )
    return replace(item, sequence=sequence)


def resolve(target: str, store_path: str | Path | None = None, bindings: Mapping[str, int] | None = None) -> Exportable:
    """`target` is an operator id in the store (digits only) or an operator file."""
    if target.isdigit():
        return from_store(store_path, int(target), bindings)
    return from_file(target, bindings)
