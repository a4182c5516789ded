"""Hostile Tessera files for tests: the bundled examples with random JSON values grafted
into any field, and structural mutations (keys dropped, lists doubled or emptied, values
nested deeply). Hypothesis strategies, shared by the loaders' fuzz and the window's."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from tests.support import EXAMPLES

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
LONG_NUMBER = "\x00long number\x00"  # stands for the literal until the text is written
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
KEYS = st.one_of(st.text(max_size=6), st.sampled_from(HOSTILE_TEXT))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
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
    emptied, a value buried in nested lists, a whole number too long for Python, or the whole
    thing nested too deeply."""
    doc = draw(st.sampled_from(documents))
    path = draw(st.sampled_from(paths(doc)))
    kind = draw(
        st.sampled_from(
            ("tweak", "tweak", "tweak", "graft", "graft", "drop", "double", "empty", "bury", "deep", "long number")
        )
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
    elif kind == "long number":  # a literal json.dumps cannot write (past Python's 4,300 digits) or float overflows
        digits = draw(st.sampled_from(["-" + "9" * 11, "1" + "0" * 400, "9" * 5000]))
        return json.dumps(replaced(doc, path, lambda _: LONG_NUMBER)).replace(json.dumps(LONG_NUMBER), digits)
    return json.dumps(doc, allow_nan=True)
