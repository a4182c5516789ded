"""A generative fuzz of the two small grammars typed on the command line and in the window:
the results filter (`tessera results --filter`, the Explorer's filter box) and a device's
address (`tessera device add --tracker HOST:PORT`). Whatever the text, the answer is a parse or
one short error of the grammar's own kind, within a time bound: a filter that parses runs on a
real store without an SQLite error, and an address that parses is written back as it was read.

`make test` replays a quarter of FUZZ_CASES (250 of the default 1000) per grammar, the same
every time (a few seconds); `make fuzz CASES=N` runs N / 4 new ones."""

from __future__ import annotations

import sqlite3
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.devices import DeviceError, parse_address
from core.devices.device import join_address
from core.store import Store
from core.store.result_fields import BY_NAME
from core.store.result_filter import FilterError, parse_filter
from tests.core.test_fuzz_files import CASES, FUZZ, timed

GRAMMAR = settings(FUZZ, max_examples=max(1, CASES // 4))
MESSAGE = 500  # characters: a refusal quotes the term cut short, and may list the columns

ODD_TEXT = ["", "'", '"', "\\", "%", "_", "²", "٩١٩٠", "９", "1e308", "nan", "-inf", "0x10", "9" * 5000, "é", "\x00"]
VALUES = st.one_of(
    st.sampled_from(ODD_TEXT),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.text(max_size=20),
)
NAMES = st.one_of(
    st.sampled_from(sorted(BY_NAME)),
    st.sampled_from(["bindings.H", "bindings.C_in", "bindings.", "Latency", "colour"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}(\.[A-Za-z_][A-Za-z0-9_]{0,5})?", fullmatch=True),
)
OPERATORS = st.sampled_from(["<", "<=", ">", ">=", "=", "!=", "~", "==", "=<", "<>"])
TERMS = st.one_of(
    st.builds(lambda n, sp, o, v: f"{n}{sp}{o}{sp}{v}", NAMES, st.sampled_from(["", " "]), OPERATORS, VALUES),
    VALUES,
    st.builds(lambda t: f'"{t}"', st.text(max_size=10)),
)
FILTERS = st.one_of(
    st.lists(TERMS, max_size=12).map(" ".join),
    st.builds(lambda t, n: " ".join([t] * n), TERMS, st.integers(min_value=200, max_value=2000)),
    st.text(max_size=200),
)


def refused(parse, text: str, kind: type[Exception]):
    """(what `parse` read, None) or (None, its error's message), within the time bound: an error
    of another kind escapes and fails the case."""
    try:
        return timed(lambda: parse(text)), None
    except kind as e:
        return None, str(e)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from tests.store_damage import build_store
    from tests.support import EXAMPLES

    path = tmp_path_factory.mktemp("fuzz") / "results.db"
    build_store(path, EXAMPLES, rows=20)
    with Store(path, reading=True) as opened:
        yield opened


@GRAMMAR
@given(text=FILTERS)
def test_filters(store, text):
    where, error = refused(parse_filter, text, FilterError)
    if where is None:
        assert len(error) <= MESSAGE, f"a message of {len(error):,} characters: {error[:MESSAGE]}"
        return
    try:
        timed(lambda: list(store.results(where.where or None, where.args)))
    except sqlite3.Error as e:  # what parses must run
        raise AssertionError(f"the filter {text[:200]!r} parsed but SQLite refused it: {e}") from None


HOSTS = st.one_of(
    st.sampled_from(["127.0.0.1", "localhost", "::1", "[::1]", "fe80::1%eth0", "[]", "", "a" * 300, "h.example"]),
    st.from_regex(r"[A-Za-z0-9_.:\[\]-]{0,20}", fullmatch=True),
    st.text(max_size=20),
)
PORTS = st.one_of(
    st.integers(min_value=-5, max_value=70000).map(str),
    st.sampled_from(["²", "٩١٩٠", "９１９０", "9" * 5000, "", " 9190", "9190 ", "+9190", "0x23", "1e3"]),
    st.text(alphabet=string.digits + "٠١٢", max_size=8),
)
ADDRESSES = st.one_of(st.builds(lambda h, p: f"{h}:{p}", HOSTS, PORTS), st.text(max_size=40))


@GRAMMAR
@given(text=ADDRESSES)
def test_addresses(text):
    address, error = refused(parse_address, text, DeviceError)
    if address is None:
        assert len(error) <= 300, f"a message of {len(error):,} characters: {error[:300]}"
        return
    host, port = address
    assert 1 <= port <= 65535 and port == int(text.rpartition(":")[2])
    assert text.rpartition(":")[2].isascii()
    assert parse_address(join_address(host, port)) == (host, port)  # listed as it reads back
