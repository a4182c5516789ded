"""A generative fuzz of both file loaders (issue 19): random JSON values grafted into every
field of the bundled examples, and structural mutations (keys dropped, lists duplicated or
emptied, values nested deeply, whole numbers too long for Python). Whatever the file holds, the
program answers with a format or binding error that names the file in a few lines, within a
time bound, and what validation accepts the next stage handles: an operator that validates
generates its PyTorch module, a sequence that checks legal becomes an operator that builds.

`make test` runs FUZZ_CASES (default 1000) cases per loader, the same ones every time;
`make fuzz CASES=20000` runs new random ones."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings

from core.analysis.summary import summarize
from core.codegen.loopnest_ir import checked_sequence, result_operator
from core.codegen.to_torch import module_source
from core.errors import TesseraError
from core.ir.loopnest import LoopNestError
from core.ir.sequence import parse_sequence
from core.ir.serialize import graph_from_document, parse_document
from tests.hostile_files import OPERATORS, SEQUENCES, mutated, paths
from tests.support import EXAMPLES

CASES = int(os.environ.get("FUZZ_CASES", "1000"))
SECONDS = 5.0  # per file, on a loaded 2-core machine; a hang or an exponential blow-up fails it


MESSAGE = 300  # characters: an error names the bad value, never echoes all of it


def read(parse, text: str):
    """(what `parse` read, None) or (None, its error's message): nothing else may escape."""
    try:
        return parse(text, "fuzz.json"), None
    except TesseraError as e:
        return None, str(e)


def check_refusal(error: str) -> None:
    assert error.startswith("fuzz.json"), f"the error does not name the file: {error[:MESSAGE]}"
    assert len(error) <= MESSAGE, f"a message of {len(error):,} characters: {error[:MESSAGE]}"


def timed(call):
    start = time.perf_counter()
    result = call()
    assert time.perf_counter() - start < SECONDS, "too slow for one file"
    return result


FUZZ = settings(
    max_examples=CASES,
    deadline=None,  # timed() bounds each file; hypothesis' deadline would also count its own work
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize="FUZZ_RANDOM" not in os.environ,  # the suite replays the same cases; `make fuzz` explores
    database=None,
)


@FUZZ
@given(mutated(OPERATORS))
def test_operator_files(text):
    doc, error = timed(lambda: read(parse_document, text))
    if doc is None:
        check_refusal(error)
        return
    graph = graph_from_document(doc, "fuzz.json")
    summary = timed(lambda: summarize(graph, graph.bindings))
    event("operator read" if not summary.ok else "operator valid")
    if summary.ok and summary.numeric_cost is not None:
        timed(lambda: module_source(graph, graph.bindings))  # validation accepted it: codegen must too


@FUZZ
@given(mutated(SEQUENCES))
def test_sequence_files(text):
    sequence, error = timed(lambda: read(parse_sequence, text))
    if sequence is None:
        check_refusal(error)
        return
    try:
        report = timed(lambda: checked_sequence(sequence, {}))
    except LoopNestError:
        return  # the starting nest cannot be built at these sizes: said plainly
    event("sequence legal" if report.legal else "sequence checked")
    if report.legal and report.final is not None:
        operator = timed(lambda: result_operator(report.final, "fuzz"))  # check accepted it: apply builds it
        for part in operator.summaries():
            assert part.ok, part.messages()


def test_the_fuzz_reaches_every_example():
    """Every bundled file is a seed, and each has fields to mutate."""
    assert len(OPERATORS) >= 9 and len(SEQUENCES) >= 5
    assert all(len(paths(doc)) > 10 for doc in OPERATORS + SEQUENCES)
    assert Path(EXAMPLES).is_dir()
