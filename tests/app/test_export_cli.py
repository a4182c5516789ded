"""`tessera export` as a user runs it: from a file or a store id, every format that needs
no TVM (pictures drawn by a real offscreen Qt in the CLI process), sanitised file names,
and existing files refused without --force."""

from __future__ import annotations

import json
import struct
import xml.etree.ElementTree as ET

import pytest

from app.cli import main
from core.analysis.legality import check_sequence
from core.codegen.loopnest_ir import result_operator
from core.ir.sequence import load_sequence, sequence_document
from core.ir.serialize import load_operator, read_document
from core.store import Store
from tests.support import EXAMPLES, tessera

CONV = EXAMPLES / "conv2d.json"


@pytest.fixture
def store_path(tmp_path):
    """A store with two operators: one measured at small sizes, one found by a search, never measured
    and saved without sizes."""
    path = tmp_path / "results.db"
    with Store(path) as store:
        conv = store.add_operator(read_document(CONV), "Conv 3x3 / baseline", "search:mcts")
        store.add_measurement(
            conv, None, {"latency_ms": 2.0, "flops": 5e6, "bindings": {"C_in": 8, "C_out": 4, "H": 6, "W": 6, "K": 3}}
        )
        store.add_measurement(
            conv, None, {"latency_ms": 1.0, "flops": 5e6, "bindings": {"C_in": 8, "C_out": 8, "H": 6, "W": 6, "K": 3}}
        )
        shift = {k: v for k, v in read_document(EXAMPLES / "shift_conv.json").items() if k != "bindings"}
        store.add_operator(shift, "", "search:canvas")
    return path


def export(*args: str) -> int:
    return main(["export", *args])


def test_a_stored_operator_takes_its_name_and_its_latest_sizes(store_path, tmp_path, capsys):
    assert export("1", "--format", "torch", "--store", str(store_path), "--out", f"{tmp_path}/") == 0
    path = tmp_path / "conv_3x3_baseline.py"
    assert capsys.readouterr().out == f"wrote {path}\n"
    source = path.read_text()
    assert source.startswith('"""Conv 3x3 / baseline: a neural operator exported by Tessera')
    assert "Exported at: C_in=8, C_out=8, H=6, K=3, W=6" in source  # the latest measurement's
    assert "Origin:   operator 1 (search:mcts) in results store results.db" in source
    assert "class Conv3x3Baseline(nn.Module)" in source
    assert (
        export(
            "1", "--format", "torch", "--store", str(store_path), "--out", str(tmp_path / "b.py"), "--bind", "C_out=16"
        )
        == 0
    )
    assert "C_in=8, C_out=16, H=6, K=3, W=6" in (tmp_path / "b.py").read_text()


def test_an_unmeasured_operator_needs_sizes(store_path, tmp_path, capsys):
    assert export("2", "--format", "torch", "--store", str(store_path), "--out", str(tmp_path)) == 1
    assert capsys.readouterr().err == (
        "tessera export: operator 2 (operator 2 (search:canvas) in results store "
        "results.db) has no size for C_in, C_out, H, W; pass e.g. "
        "--bind C_in=...,C_out=...,H=...,W=...\n"
    )
    assert (
        export(
            "2",
            "--format",
            "torch",
            "--store",
            str(store_path),
            "--out",
            str(tmp_path),
            "--bind",
            "C_in=4,C_out=4,H=5,W=5",
        )
        == 0
    )
    assert (tmp_path / "operator_2.py").is_file()
    with Store(store_path) as store:  # saved with its sizes, as search candidates are: exported at them
        op = store.add_operator(read_document(EXAMPLES / "involution.json"), "inv", "search:canvas")
    assert export(str(op), "--format", "torch", "--store", str(store_path), "--out", str(tmp_path / "inv.py")) == 0
    sizes = ", ".join(f"{k}={v}" for k, v in sorted(read_document(EXAMPLES / "involution.json")["bindings"].items()))
    assert f"Exported at: {sizes}" in (tmp_path / "inv.py").read_text()


def test_the_json_export_opens_as_a_laid_out_operator(store_path, tmp_path):
    assert export("1", "--format", "json", "--store", str(store_path), "--out", str(tmp_path / "c.json")) == 0
    graph = load_operator(tmp_path / "c.json")
    assert graph.name == "Conv 3x3 / baseline" and graph.bindings == {"C_in": 8, "C_out": 8, "H": 6, "W": 6, "K": 3}
    positions = [graph.pos(n) for n in graph.g.nodes]
    assert len(set(positions)) == len(positions)  # the store keeps no positions: laid out afresh


def test_an_operator_a_sequence_search_found_exports_its_sequence(tmp_path):
    path = tmp_path / "found.db"
    seq = load_sequence(EXAMPLES / "sequences" / "seq_grouped_conv.json")
    graph = result_operator(check_sequence(seq).final, "grouped").graph
    with Store(path) as store:
        found = store.add_operator(graph, "grouped", "search:sequences", sequence_document(seq))
    assert export(str(found), "--format", "sequence", "--store", str(path), "--out", f"{tmp_path}/") == 0
    written = load_sequence(tmp_path / "grouped_sequence.json")  # opens as a sequence file
    assert written.steps == seq.steps and written.bindings == seq.bindings


def test_existing_files_are_refused_without_force(tmp_path, capsys):
    out = tmp_path / "op.py"
    out.write_text("# mine\n")
    assert export(str(CONV), "--format", "torch", "--out", str(out)) == 1
    assert capsys.readouterr().err == f"tessera export: {out} already exists; pass --force to overwrite\n"
    assert out.read_text() == "# mine\n"
    assert export(str(CONV), "--format", "torch", "--out", str(out), "--force") == 0
    assert out.read_text().startswith('"""conv2d: a neural operator')


def test_results_and_front_as_csv(store_path, tmp_path):
    assert export("--format", "csv", "--store", str(store_path), "--out", str(tmp_path)) == 0
    assert len((tmp_path / "results.csv").read_text().splitlines()) == 1 + 3  # two measurements, one unmeasured
    assert export("--format", "pareto-csv", "--store", str(store_path), "--out", str(tmp_path)) == 0
    lines = (tmp_path / "pareto_latency_ms_flops.csv").read_text().splitlines()
    assert len(lines) == 2 and lines[1].startswith("m2,2,")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--format", "torch"], "--format torch exports one operator: give its ID in the store or its FILE"),
        ([str(CONV), "--format", "csv"], "--format csv exports the whole results store; give no ID or FILE"),
        (["7", "--format", "dot"], "no operator 7 in results store"),
        (["--format", "pareto-png", "--columns", "latency_ms,colour"], "--columns takes two of latency_ms, "),
        (["missing.json", "--format", "dot"], "missing.json: no such file"),
        (["1", "--format", "sequence"], "was not found by a transformation sequence"),
        ([str(CONV), "--format", "sequence"], "was not found by a transformation sequence"),
        (
            [str(CONV), "--format", "torch", "--bind", "c_in=128"],
            "no variable c_in in " + str(CONV) + "; did you mean C_in?",
        ),
        (
            [str(EXAMPLES / "involution.json"), "--format", "torch-replace", "--bind", "C_out=1024"],
            "no variable C_out in " + str(EXAMPLES / "involution.json") + " (variables: C_in, G, H, K, W)",
        ),
        (["1", "--format", "json", "--bind", "Cout=4"], "no variable Cout in "),
    ],
)
def test_mistakes_get_one_clear_message(store_path, tmp_path, capsys, args, message):
    assert export(*args, "--store", str(store_path), "--out", str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert err.startswith("tessera export: ") and message in err and "Traceback" not in err


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return [t.text.strip() for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text and t.text.strip()]


def test_pictures_of_graphs_and_of_the_front(store_path, tmp_path):
    """One CLI process per picture, as a user runs it: no display, no Graphviz."""
    for args in (
        [str(EXAMPLES / "involution.json"), "--format", "png"],
        [str(EXAMPLES / "involution.json"), "--format", "svg"],
        ["--format", "pareto-png", "--store", str(store_path)],
        ["--format", "pareto-svg", "--store", str(store_path), "--columns", "flops,latency_ms"],
    ):
        run = tessera("export", *args, "--out", f"{tmp_path}/")
        assert run.returncode == 0, run.stderr
    width, height = _png_size(tmp_path / "involution.png")
    assert width > 1000 and 200 < height < width  # left to right, cards readable at 1.5 px per unit
    texts = _svg_texts(tmp_path / "involution.svg")
    assert {"Input", "Output", "Unfold", "Broadcast", "Fully connected", "64×56×56"} <= set(texts)
    assert _png_size(tmp_path / "pareto_latency_ms_flops.png") == (900, 600)
    texts = _svg_texts(tmp_path / "pareto_flops_latency_ms.svg")
    assert "Pareto front" in texts and any(t.startswith("Pareto front: Latency (ms) vs FLOPs") for t in texts)


def test_the_json_export_matches_the_file_it_came_from(tmp_path):
    assert export(str(CONV), "--format", "json", "--out", str(tmp_path / "c.json")) == 0
    exported, original = json.loads((tmp_path / "c.json").read_text()), json.loads(CONV.read_text())
    assert exported["nodes"] == original["nodes"] and exported["bindings"] == original["bindings"]


def test_a_picture_too_large_to_make_out_is_refused(tmp_path, capsys):
    """A chain of 3,000 shifts, even wrapped onto rows, would draw its cards as specks in 4096 pixels: refused, saying what to use instead."""
    doc = json.loads(CONV.read_text())
    shifts = [
        {"id": f"s{i}", "op": "shift", "params": {"dim": -1, "amount": 1}, "pos": [0, 100 * i]} for i in range(3000)
    ]
    doc["nodes"] = shifts + doc["nodes"]
    doc["edges"] = [
        {"from": "input", "to": "s0"},
        *({"from": f"s{i}", "to": f"s{i + 1}"} for i in range(2999)),
        {"from": "s2999", "to": doc["edges"][0]["to"]},
        *doc["edges"][1:],
    ]
    chain = tmp_path / "chain.json"
    chain.write_text(json.dumps(doc))
    assert export(str(chain), "--format", "png", "--out", str(tmp_path / "chain.png")) == 1
    err = capsys.readouterr().err
    assert "has 3,008 nodes: a picture of at most 4096 pixels a side" in err
    assert "export it as svg, or as dot for Graphviz" in err and not (tmp_path / "chain.png").exists()


def test_torch_replace_says_what_it_does_to_a_users_model_and_fixed_sizes_stay_available(tmp_path, capsys):
    zoo = "tests/core/conv_zoo.py:build"
    out = tmp_path / "shift.py"
    args = [str(EXAMPLES / "shift_conv.json"), "--format", "torch-replace", "--out", str(out), "--model", zoo]
    assert export(*args, "--input", "3,40,40", "--replace", "standard,strided") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [f"wrote {out}", "ShiftConv: replaced 4 of 9 convolutions"]
    assert "  left     point: 1x1: pointwise convolutions not asked for (kinds=('standard', 'strided'))" in lines
    assert lines[-1] == "the replaced conv_zoo.py:build runs on [2, 3, 40, 40]: [2, 10]"
    assert "kinds=('standard', 'strided'), copy_weights=False" in out.read_text()  # the file's default kinds
    fixed = tmp_path / "fixed.py"
    assert export(str(CONV), "--format", "torch", "--fixed-sizes", "--out", str(fixed), "--bind", "C_in=8") == 0
    assert "class Conv2d(nn.Module):\n    def __init__(self):" in fixed.read_text()
    capsys.readouterr()
    assert export(str(CONV), "--format", "torch", "--out", str(tmp_path / "x.py"), "--model", zoo) == 1
    assert "--model shows what replace_convs does: it goes with --format torch-replace" in capsys.readouterr().err
