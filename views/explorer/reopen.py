"""How a result of the store becomes an editable operator again."""

from __future__ import annotations

import json

from core.errors import TesseraError
from core.ir.graph import OperatorGraph
from core.ir.layout import layered_layout
from core.ir.serialize import content_hash, graph_from_document
from core.jobs.queue import JobQueue
from core.store import Store


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
