"""What the results browser changes in the store, and how a result becomes an editable
operator again.

Deleting and renaming are not (yet) Store methods, so the SQL lives here, in one place,
inside the store's own write transactions; it belongs in core.store once it offers them."""
from __future__ import annotations

import json

from core.ir.errors import TesseraError
from core.ir.graph import OperatorGraph
from core.ir.layout import layered_layout
from core.ir.serialize import content_hash, graph_from_document
from core.jobs.queue import JobQueue
from core.store import Store, StoreError


def delete_measurements(store: Store, ids) -> int:
    """Delete measurements (and their tuning trials); operators stay. Returns how many went."""
    marks = json.dumps([int(i) for i in ids])
    with store.write():
        store.db.execute("DELETE FROM trials WHERE measurement_id IN (SELECT value FROM json_each(?))", [marks])
        return store.db.execute("DELETE FROM measurements WHERE id IN (SELECT value FROM json_each(?))",
                                [marks]).rowcount


def rename_operator(store: Store, operator_id: int, name: str) -> None:
    name = name.strip()
    if not name:
        raise StoreError("an operator needs a non-empty name")
    with store.write():
        if store.db.execute("UPDATE operators SET name = ? WHERE id = ?", [name, operator_id]).rowcount != 1:
            raise StoreError(f"no operator {operator_id} in {store.path}")


def result_graph(store: Store, queue: JobQueue, row: dict) -> OperatorGraph:
    """The operator of a results row (as ExplorerSession.rows gives it, with `result_id`),
    ready for the editor, with the row's bindings.

    The store keeps operators in canonical form (nodes n0, n1, ..., no positions); the
    job that measured the row still has the document as it was drawn, so that one is
    preferred when it is the same operator."""
    operator = store.operator(row["operator_id"])
    document = operator["document"]
    if row.get("job_id") is not None:
        try:
            drawn = queue.get(row["job_id"]).payload.get("operator")
            if isinstance(drawn, dict) and content_hash(drawn) == operator["hash"]:
                document = drawn
        except TesseraError:
            pass  # the job row is gone or its document no longer reads: use the canonical form
    graph = graph_from_document(document, f"result {row['result_id']}")
    if document is operator["document"]:
        for node, pos in layered_layout(graph).items():
            graph.set_pos(node, pos)
    graph.set_declaration(name=operator["name"] or graph.name or f"operator {row['operator_id']}")
    graph.bindings = {**graph.bindings, **json.loads(row.get("bindings") or "{}")}
    return graph
