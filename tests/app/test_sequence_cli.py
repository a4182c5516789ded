"""`tessera sequence show|apply|check` as a user runs them (a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.analysis.summary import summarize
from core.ir.serialize import load_operator
from tests.support import EXAMPLES, ROOT

SEQ = EXAMPLES / "sequences"


def tessera(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "sequence", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def illegal_file(tmp_path):
    doc = json.loads((SEQ / "seq_grouped_conv.json").read_text())
    doc["steps"].append({"op": "reorder", "loops": ["kw", "g"]})
    path = tmp_path / "illegal.json"
    path.write_text(json.dumps(doc))
    return path


def test_show_prints_every_step_with_its_nest():
    out = tessera("show", str(SEQ / "seq_spatial_bottleneck.json"), "--bind", "C_in=8,C_out=8,H=8,W=8")
    assert out.returncode == 0, out.stderr
    assert "  2. bottleneck(oh, 2)" in out.stdout and "for oh in range(4):" in out.stdout
    assert "O[c, y, x] = Y[c, y // 2, x // 2]" in out.stdout


def test_apply_reports_the_operator_and_saves_it(tmp_path):
    saved = tmp_path / "op.json"
    out = tessera("apply", str(SEQ / "seq_grouped_conv.json"), "--save-operator", str(saved), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["legal"] and data["parts"][0]["params"] == "C_in*C_out*K^2/G"
    assert data["total"]["flops"] == 2 * 64 * 16 * 9 * 56 * 56
    s = summarize(load_operator(saved))
    assert s.ok and s.numeric_cost["flops"] == data["total"]["flops"]


def test_apply_saves_a_peeled_result_as_one_operator_joined_by_concat(tmp_path):
    out = tessera("apply", str(SEQ / "seq_split_group.json"), "--save-operator", str(tmp_path / "x.json"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    graph = load_operator(tmp_path / "x.json")
    assert [graph.prim(n).op for n in graph.primitive_nodes()].count("concat") == len(data["parts"]) - 1 == 1
    s = summarize(graph)
    assert s.ok and s.numeric_cost["flops"] == data["total"]["flops"]
    assert s.numeric_shapes["output"][0] == sum(p["channels"] for p in data["parts"])


def test_check_exits_1_and_names_the_reversed_dependence(tmp_path):
    assert tessera("check", str(SEQ / "seq_unroll_group.json")).returncode == 0
    out = tessera("check", str(illegal_file(tmp_path)))
    assert out.returncode == 1
    assert "  2. reorder(kw, g)" in out.stdout and "ILLEGAL" in out.stdout
    assert "reverse the accumulation dependence on O[g*16 + co, oh, ow] carried by loop ci" in out.stdout


def test_bad_files_and_sizes_give_one_clear_line(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "tessera.sequence", "version": 1, "steps": [{"op": "skew"}]}')
    out = tessera("check", str(broken))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == (
        f"tessera sequence: {broken}: steps[0]: unknown op 'skew' (known: reorder, interchange, split, tile, "
        "fuse, unroll, vectorize, parallel, prefetch, peel, bottleneck, group)"
    )
    out = tessera("apply", str(SEQ / "seq_schedule.json"), "--bind", "C_out=12")
    assert out.returncode == 1
    assert "step 1 (error): split(co, 8): co has 12 iterations, not divisible by 8" in out.stderr


def test_check_and_apply_agree_on_a_group_count_that_is_a_tensor_size(tmp_path):
    """group(co, ci, C_in) divides 64 channels by 64, but as an operator it puts C_in in a
    denominator: check refuses it and apply says the same, never a traceback."""
    doc = json.loads((SEQ / "seq_grouped_conv.json").read_text())
    doc["steps"][0]["G"] = "C_in"
    path = tmp_path / "g_cin.json"
    path.write_text(json.dumps(doc))
    reason = "C_in divides the channels, so it must be a number or a coefficient such as G"
    check, apply = tessera("check", str(path)), tessera("apply", str(path))
    assert check.returncode == 1 and reason in check.stdout
    assert apply.returncode == 1 and reason in apply.stderr and "Traceback" not in apply.stderr


@pytest.mark.tvm
def test_check_verify_runs_the_tvm_schedule_in_a_worker():
    out = tessera("check", str(SEQ / "seq_schedule.json"), "--bind", "C_in=8,C_out=8,H=8,W=8", "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "TVM schedule vs untransformed nest: max abs error 0 (match)" in out.stdout


@pytest.mark.parametrize("command", ["check", "show"])
def test_check_and_show_say_why_when_the_operator_cannot_be_built(command, capsys):
    """Every step is legal, but the operator they make has a tensor of 6.4e11 elements: the exit
    status 1 comes with the reason, as apply's does."""
    from app.cli import main

    huge = "C_in=40000,C_out=40000,H=4000,W=4000"
    assert main(["sequence", command, str(SEQ / "seq_grouped_conv.json"), "--bind", huge]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the resulting operator cannot be built: ")
    assert "has 640,000,000,000 elements, more than 2^31 - 1" in err
