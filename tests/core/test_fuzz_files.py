"""A generative fuzz of both file loaders (issue 19): random JSON values grafted into every
field of the bundled examples, and structural mutations (keys dropped, lists duplicated or
emptied, values nested deeply). Whatever the file holds, the program answers with a format
or binding error that names the file, within a time bound, and what validation accepts the
next stage handles: an operator that validates generates its PyTorch module, a sequence that
checks legal becomes an operator that builds.

`make test` runs FUZZ_CASES (default 1000) cases per loader, the same ones every time;
`make fuzz CASES=20000` runs new random ones."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from core.analysis.summary import summarize
from core.codegen.loopnest_ir import checked_sequence, result_operator
from core.codegen.to_torch import module_source
from core.ir.errors import TesseraError
from core.ir.loopnest import LoopNestError
from core.ir.sequence import parse_sequence
from core.ir.serialize import graph_from_document, parse_document
from tests.support import EXAMPLES

CASES = int(os.environ.get("FUZZ_CASES", "1000"))
SECONDS = 5.0  # per file, on a loaded 2-core machine; a hang or an exponential blow-up fails it
OPERATORS = [json.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*.json"))]
SEQUENCES = [json.loads(p.read_text()) for p in sorted((EXAMPLES / "sequences").glob("*.json"))]
HOSTILE_TEXT = [
    "K^999999999",
    "10^999999999",
    "7^9999999",
    "K*" * 2000 + "K",
    "1/G",
    "0",
    "-3",
    "C_in/C_out",
    "x1",
    "C_in",
    "",
    "9" * 5000,
    "conv2d",
    "group",
    "output",
    "input",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-3, max_value=70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(HOSTILE_TEXT),
    st.text(max_size=12),
)
SIZE_LIKE = st.sampled_from(
    ["C_in/2", "2*K", "G", "C_out*G", "K^2", "C_in/G", "x1", "s", "C_in*C_out", "H/2", "3", "1"]
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)


def paths(value, prefix=()) -> list[tuple]:
    """Every path to a field or list item of a JSON value (the root included)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


def replaced(doc, path: tuple, make):
    """A copy of `doc` with the value at `path` replaced by make(old value); `doc` is untouched."""
    copy = json.loads(json.dumps(doc))
    if not path:
        return make(copy)
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = make(parent[path[-1]])
    return copy


@st.composite
def mutated(draw, documents: list[dict]) -> str:
    """The text of one mutated example: a value grafted in, a key dropped, a list doubled or
    emptied, a value buried in nested lists, or the whole thing nested too deeply."""
    doc = draw(st.sampled_from(documents))
    path = draw(st.sampled_from(paths(doc)))
    kind = draw(
        st.sampled_from(("tweak", "tweak", "tweak", "graft", "graft", "drop", "double", "empty", "bury", "deep"))
    )
    if kind == "tweak":  # a value of the same type, so more files get past reading to the later stages
        old = replaced(doc, (), lambda v: v)
        for key in path:
            old = old[key]
        if isinstance(old, bool) or old is None:
            value = draw(st.booleans())
        elif isinstance(old, int):
            value = draw(st.one_of(st.integers(-2, 9), st.integers(10, 2**33)))
        elif isinstance(old, float):
            value = draw(st.floats(-1e6, 1e6))
        elif isinstance(old, str):
            value = draw(st.one_of(SIZE_LIKE, st.sampled_from(HOSTILE_TEXT)))
        else:
            value = draw(VALUES)
        doc = replaced(doc, path, lambda _: value)
    elif kind == "graft":
        value = draw(VALUES)
        doc = replaced(doc, path, lambda _: value)
    elif kind == "drop" and path:
        doc = replaced(doc, (), lambda v: v)
        container = doc
        for key in path[:-1]:
            container = container[key]
        del container[path[-1]]
    elif kind == "double":
        doc = replaced(doc, path, lambda v: v + v if isinstance(v, list) else [v, v])
    elif kind == "empty":
        doc = replaced(doc, path, lambda v: type(v)() if isinstance(v, (list, dict, str)) else None)
    elif kind == "bury":
        depth = draw(st.integers(1, 50))
        doc = replaced(doc, path, lambda v: json.loads("[" * depth + json.dumps(v) + "]" * depth))
    elif kind == "deep":
        return "[" * 100_000 + "]" * 100_000
    return json.dumps(doc, allow_nan=True)


def read(parse, text: str):
    """(what `parse` read, None) or (None, its error's message): nothing else may escape."""
    try:
        return parse(text, "fuzz.json"), None
    except TesseraError as e:
        return None, str(e)


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
        assert error.startswith("fuzz.json"), f"the error does not name the file: {error}"
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
        assert error.startswith("fuzz.json"), f"the error does not name the file: {error}"
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
