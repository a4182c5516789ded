"""The JSON format: round trips, canonical identity, and malformed files rejected clearly."""

import copy
import json

import pytest

from core.data.assignment import read_stand_in
from core.ir.errors import FormatError
from core.ir.sequence import load_sequence
from core.ir.serialize import (
    canonical_json,
    content_hash,
    graph_from_document,
    load_operator,
    parse_document,
    read_document,
    save_operator,
    to_document,
)
from tests.support import EXAMPLES


def _doc(name="conv2d"):
    return json.loads((EXAMPLES / f"{name}.json").read_text())


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_examples_round_trip(path, tmp_path):
    g = load_operator(path)
    save_operator(g, tmp_path / "copy.json")
    assert to_document(load_operator(tmp_path / "copy.json")) == to_document(g)
    assert read_document(path) == json.loads(path.read_text())


def test_canonical_form_ignores_names_positions_and_order():
    doc = _doc("involution")
    other = copy.deepcopy(doc)
    rename = {n["id"]: f"node_{i}" for i, n in enumerate(reversed(other["nodes"]))}
    for n in other["nodes"]:
        n["id"] = rename[n["id"]]
        n["pos"] = [1, 2]
    for e in other["edges"]:
        e["from"], e["to"] = rename.get(e["from"], e["from"]), rename.get(e["to"], e["to"])
    other["nodes"].reverse()
    other["edges"].reverse()
    other["name"], other["description"], other["bindings"] = "renamed", "", {"C_in": 8}
    other["notes"] = ["provenance is not identity"]
    assert canonical_json(other) == canonical_json(doc)
    assert content_hash(other) == content_hash(doc)
    changed = copy.deepcopy(doc)
    changed["nodes"][0]["params"]["groups"] = "2"
    assert content_hash(changed) != content_hash(doc)


def _mutations():
    """(label, mutate(doc) or raw text, expected message fragment): at least 20 distinct faults."""

    def drop(key):
        return lambda d: d.pop(key)

    def set_(path, value):
        def f(d):
            target = d
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = value

        return f

    return [
        ("not json", "{ nodes: [", "not valid JSON (line 1, column 3"),
        ("truncated", '{"format": "tessera.operator", "version": 1', "not valid JSON"),
        ("top-level list", "[1, 2]", "top level: expected a JSON object"),
        ("wrong format tag", set_(["format"], "onnx"), "format: expected 'tessera.operator'"),
        ("future version", set_(["version"], 99), "version: this Tessera reads version 1, the file has 99"),
        ("missing nodes", drop("nodes"), "nodes: missing field"),
        ("missing edges", drop("edges"), "edges: missing field"),
        ("missing input", drop("input"), "input: missing field"),
        ("unknown top-level field", set_(["script"], "rm -rf /"), "unknown field(s) script"),
        ("unknown primitive", set_(["nodes", 0, "op"], "unfld"), "nodes[0] ('unfold_h'): unknown primitive 'unfld'"),
        ("node without id", set_(["nodes", 1, "id"], ""), "nodes[1]: missing or empty 'id'"),
        ("duplicate id", set_(["nodes", 1, "id"], "unfold_h"), "nodes[1] ('unfold_h'): duplicate or reserved"),
        ("reserved id", set_(["nodes", 0, "id"], "output"), "duplicate or reserved node id"),
        ("dangling edge", set_(["edges", 0, "to"], "ghost"), "edges[0]: 'to' names no node: 'ghost'"),
        ("dangling source", set_(["edges", 0, "from"], None), "edges[0]: 'from' names no node: None"),
        (
            "cycle",
            lambda d: [e.update({"from": "sum_kw"}) for e in d["edges"] if e["to"] == "unfold_h"],
            "would create a cycle",
        ),
        ("bad port", set_(["edges", 0, "port"], 3), "has no input port 3"),
        ("port not int", set_(["edges", 0, "port"], "0"), "'port' must be an integer"),
        (
            "bad size expression",
            set_(["input", "shape", 0], "C_in+1"),
            "input.shape[0]: unexpected '+' in size expression 'C_in+1'",
        ),
        ("empty shape", set_(["output", "shape"], []), "output.shape: expected a non-empty list"),
        ("bad param type", set_(["nodes", 0, "params", "dim"], "H"), "unfold.dim must be an integer axis index"),
        ("unknown param", set_(["nodes", 0, "params", "stride"], 2), "unknown parameter(s) stride"),
        (
            "bad choice",
            lambda d: d["nodes"].append({"id": "e", "op": "elementwise", "params": {"fn": "eval"}}),
            "elementwise.fn must be one of",
        ),
        ("bad variable kind", set_(["variables", "K"], "secret"), "variables.K: kind must be primary"),
        ("notes not a list of text", set_(["notes"], ["known", 3]), "notes: must be a list of strings"),
        ("bad binding", set_(["bindings", "K"], -3), "bindings.K: must be a positive integer"),
        ("bad spatial count", set_(["input", "spatial"], 7), "input.spatial: must be an integer between 0 and 3"),
        ("bad position", set_(["nodes", 0, "pos"], [1]), "pos: must be [x, y]"),
        ("params not object", set_(["nodes", 0, "params"], [1]), "'params' must be an object"),
        ("node not object", lambda d: d["nodes"].append("unfold"), "expected an object"),
        ("edges not list", set_(["edges"], {}), "edges: expected a list"),
        (
            "same source twice",
            lambda d: d["edges"].append({"from": "unfold_w", "to": "share", "port": 0}),
            "already fed by unfold_w",
        ),
    ]


@pytest.mark.parametrize("label,mutation,fragment", _mutations(), ids=[m[0] for m in _mutations()])
def test_malformed_files_are_rejected_with_file_and_element(label, mutation, fragment, tmp_path):
    path = tmp_path / "broken.json"
    if isinstance(mutation, str):
        path.write_text(mutation)
    else:
        doc = _doc()
        mutation(doc)
        path.write_text(json.dumps(doc))
    with pytest.raises(FormatError) as info:
        load_operator(path)
    message = str(info.value)
    assert message.startswith(str(path) + ": ")
    assert fragment in message


def test_enough_distinct_malformed_cases():
    assert len({m[2] for m in _mutations()}) >= 20


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        load_operator(tmp_path / "absent.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(FormatError, match="cannot read"):
        load_operator(tmp_path / "bin.json")


def test_save_is_atomic(tmp_path):
    g = load_operator(EXAMPLES / "conv2d.json")
    target = tmp_path / "op.json"
    save_operator(g, target)
    assert not list(tmp_path.glob("*.tmp"))
    assert load_operator(target).name == "conv2d"


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"format": "tessera.operator", "version": true}', "the file has True"),
        ('{"format": "tessera.operator", "version": 1.0}', "the file has 1.0"),
        ('{"format": "tessera.operator", "version": 1, "x": NaN}', "NaN is not JSON"),
        ('{"format": "tessera.operator", "version": 1, "x": -Infinity}', "-Infinity is not JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply to read"),
    ],
)
def test_strict_json_and_versions(text, message):
    """What other programs cannot read, or what only looks like version 1, is refused by name."""
    with pytest.raises(FormatError, match=message):
        parse_document(text, "x.json")


def test_positions_must_be_finite():
    doc = json.loads((EXAMPLES / "conv2d.json").read_text())
    doc["nodes"][0]["pos"] = [1e309, 0]  # JSON's way to spell infinity
    with pytest.raises(FormatError, match=r"nodes\[0\] \('unfold_h'\)\.pos: must be \[x, y\], two finite numbers"):
        graph_from_document(doc, "x.json")


LONG = "9" * 5000  # past Python's limit on the digits it converts (4,300)


@pytest.mark.parametrize(
    "kind, literal",
    [("operator", LONG), ("operator", "-" + "9" * 400), ("sequence", LONG), ("assignment", LONG)],
    ids=["operator", "operator-400-digit-pos", "sequence", "assignment"],
)
def test_every_whole_number_of_a_file_is_held_to_2_31(kind, literal, tmp_path):
    """A long integer anywhere (here a position, which is otherwise a float) is refused by
    name as it is read, never a ValueError on Python's digit limit or an OverflowError."""
    operator = _doc()
    operator["input"]["pos"] = ["HERE", 0]
    doc = {
        "operator": operator,
        "sequence": json.loads((EXAMPLES / "sequences" / "seq_grouped_conv.json").read_text()),
        "assignment": {
            "format": "tessera.assignment",
            "version": 1,
            "backbone": "resnet18",
            "operators": [operator],
            "layers": {},
        },
    }[kind]
    if kind == "sequence":
        doc["bindings"] = {"G": "HERE"}
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(doc).replace('"HERE"', literal))
    read = {"operator": read_document, "sequence": load_sequence, "assignment": read_stand_in}[kind]
    with pytest.raises(FormatError) as refused:
        read(path)
    assert str(refused.value) == (
        f"{path}: the whole number {literal[:12]}... ({len(literal):,} characters) is beyond +-(2^31 - 1), "
        "the largest a Tessera file may hold"
    )


@pytest.mark.parametrize("amount", [2**63, -(2**31)])
def test_a_shift_amount_is_held_to_the_same_bound(amount):
    """In a file (read as text) and in a document already read (the store's, the editor's):
    2^63 once passed validation and failed in torch.roll at measure time."""
    doc = _doc("shift_conv")
    shift = next(n for n in doc["nodes"] if n["op"] == "shift")
    shift["params"]["amount"] = amount
    with pytest.raises(FormatError, match=f"the whole number {str(amount)[:12]}.* is beyond"):
        parse_document(json.dumps(doc), "x.json")
    with pytest.raises(FormatError, match=r"shift\.amount must be an integer from -\(2\^31 - 1\) to 2\^31 - 1"):
        graph_from_document(doc, "x.json")
    shift["params"]["amount"] = 2**31 - 1
    graph_from_document(doc, "x.json")


def test_a_rejected_value_is_named_not_echoed():
    """A value of 100,000 characters, or nested deeply, is shown cut short in the message."""
    for value in ["K" * 100_000, [[[[[[list(range(50_000))]]]]]], {"k" * 10_000: ["v" * 10_000] * 9}]:
        doc = _doc()
        doc["bindings"] = {"C_in" * 5000: value}
        with pytest.raises(FormatError) as refused:
            graph_from_document(doc, "x.json")
        assert len(str(refused.value)) < 300, str(refused.value)[:400]
