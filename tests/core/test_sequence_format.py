"""The sequence file format: round trips, and malformed files rejected with the file and
the element named (nothing from a file is ever executed)."""

from __future__ import annotations

import json

import pytest

from core.ir.errors import FormatError
from core.ir.sequence import (
    Sequence,
    load_sequence,
    make_step,
    parse_sequence,
    save_sequence,
    sequence_document,
    sequence_from_document,
)
from tests.support import EXAMPLES

SEQUENCES = sorted((EXAMPLES / "sequences").glob("seq_*.json"))


def good() -> dict:
    return {
        "format": "tessera.sequence",
        "version": 1,
        "name": "t",
        "nest": "conv2d",
        "bindings": {"C_in": 8, "C_out": 8, "H": 8, "W": 8, "K": 3},
        "steps": [
            {"op": "split", "loop": "co", "factor": 4},
            {"op": "group", "loops": ["co_o", "ci"], "G": "G"},
            {"op": "unroll", "loop": "kw", "part": 0},
        ],
    }


@pytest.mark.parametrize("path", SEQUENCES, ids=[p.stem for p in SEQUENCES])
def test_examples_round_trip(path, tmp_path):
    seq = load_sequence(path)
    assert seq.description and seq.steps
    assert sequence_document(seq) == json.loads(path.read_text())
    save_sequence(seq, tmp_path / "copy.json")
    assert load_sequence(tmp_path / "copy.json") == seq


def test_parse_and_text():
    seq = sequence_from_document(good(), "t.json")
    assert [s.text() for s in seq.steps] == ["split(co, 4)", "group(co_o, ci, G)", "unroll(kw) @part 0"]
    assert seq.steps[1].changes_architecture and not seq.steps[0].changes_architecture
    assert seq == Sequence(
        "conv2d",
        (
            make_step("split", {"loop": "co", "factor": 4}),
            make_step("group", {"loops": ["co_o", "ci"], "G": "G"}),
            make_step("unroll", {"loop": "kw"}, part=0),
        ),
        good()["bindings"],
        "t",
    )


def test_prefetch_needs_version_2_and_only_it_does(tmp_path):
    """A sequence is written in the oldest version that holds its steps: without prefetch a
    Tessera reading only version 1 still opens it."""
    seq = sequence_from_document(good())
    assert sequence_document(seq)["version"] == 1
    prefetching = seq.with_steps([*seq.steps, make_step("prefetch", {"loop": "oh"})])
    save_sequence(prefetching, tmp_path / "p.json")
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["version"] == 2 and doc["steps"][-1] == {"op": "prefetch", "loop": "oh"}
    assert load_sequence(tmp_path / "p.json") == prefetching
    assert sequence_from_document({**good(), "version": 2}) == seq


def _with(path: str, value):
    doc = good()
    target = doc
    keys = path.split(".")
    for k in keys[:-1]:
        target = target[int(k)] if k.isdigit() else target[k]
    last = keys[-1]
    if value is KeyError:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return doc


@pytest.mark.parametrize(
    "doc, message",
    [
        ([], "top level: expected a JSON object"),
        (_with("format", "tessera.operator"), "format: expected 'tessera.sequence'"),
        (_with("version", 3), "version: this Tessera reads version 1 or 2, the file has 3"),
        (_with("steps.2", {"op": "prefetch", "loop": "kw"}), "steps[2] (prefetch): this step came with version 2"),
        (_with("nest", "conv3d"), "nest: unknown nest 'conv3d' (known: conv2d, grouped_conv2d, dense)"),
        (_with("extra", 1), "top level: unknown field(s) extra"),
        (_with("reassociate", "yes"), "reassociate: must be true or false"),
        (_with("bindings.C_in", -1), "bindings.C_in: must be a positive integer"),
        (_with("bindings.C_in", True), "bindings.C_in: must be a positive integer"),
        (_with("steps", {"op": "split"}), "steps: missing, or not a list"),
        (_with("steps", KeyError), "steps: missing, or not a list"),
        (_with("steps.0", "split"), "steps[0]: expected an object"),
        (_with("steps.0.op", "skew"), "steps[0]: unknown op 'skew'"),
        (_with("steps.0.factor", KeyError), "steps[0] (split): missing 'factor'"),
        (_with("steps.0.fator", 2), "steps[0] (split): unknown field(s) fator (expected loop, factor)"),
        (_with("steps.0.loop", "co; import os"), "steps[0] (split).loop: expected a loop name"),
        (_with("steps.0.loop", 3), "steps[0] (split).loop: expected a loop name"),
        (_with("steps.0.factor", 0), "steps[0] (split).factor: expected a positive integer or a size expression"),
        (_with("steps.0.factor", "2**3"), "steps[0] (split).factor: cannot read size expression"),
        (_with("steps.0.factor", "__import__('os')"), "steps[0] (split).factor: unexpected '(' in size expression"),
        (_with("steps.1.loops", ["co_o"]), "steps[1] (group).loops: expected a list of two loop names"),
        (_with("steps.1.loops", ["co_o", "ci", "kh"]), "steps[1] (group).loops: expected a list of two loop names"),
        (_with("steps.2.part", -1), "steps[2] (unroll).part: must be a part number"),
        (_with("steps.2.part", "0"), "steps[2] (unroll).part: must be a part number"),
    ],
)
def test_malformed_documents(doc, message):
    with pytest.raises(FormatError) as e:
        sequence_from_document(doc, "bad.json")
    assert str(e.value).startswith("bad.json: ") and message in str(e.value)


def test_unreadable_files(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        load_sequence(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "tessera.sequence",')
    with pytest.raises(FormatError, match=r"broken.json: not valid JSON \(line 1"):
        load_sequence(broken)
    with pytest.raises(FormatError, match="steps\\[0\\] \\(tile\\).factors: expected a list of two factors"):
        parse_sequence(json.dumps(_with("steps.0", {"op": "tile", "loops": ["oh", "ow"], "factors": [2]})))
