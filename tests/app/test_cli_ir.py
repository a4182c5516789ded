"""`tessera validate` and `tessera info` as a user runs them (a real subprocess)."""

import json
import subprocess
import sys

from tests.support import EXAMPLES, ROOT


def tessera(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_info_json_gives_the_conv2d_numbers():
    out = tessera("info", str(EXAMPLES / "conv2d.json"), "--bind", "C_in=64,C_out=64,H=56,W=56,K=3", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["total"]["macs_value"] == 64 * 64 * 3 * 3 * 56 * 56
    assert data["total"]["flops_value"] == 2 * data["total"]["macs_value"]
    assert data["total"]["params_value"] == 64 * 64 * 3 * 3
    assert data["total"]["macs"] == "C_in*C_out*H*K^2*W"
    assert data["output_shape_numeric"] == [64, 56, 56]
    assert {n["id"] for n in data["nodes"]} >= {"input", "share", "output"}


def test_info_text_lists_nodes_and_totals():
    out = tessera("info", str(EXAMPLES / "grouped_conv.json"), "--bind", "G=2")
    assert out.returncode == 0
    assert "grouped_fc" in out.stdout and "total FLOPs: 2*C_in*C_out*H*K^2*W/G = 115,605,504" in out.stdout


def test_validate_examples_one_line_each():
    files = sorted(str(p) for p in EXAMPLES.glob("*.json"))
    out = tessera("validate", *files)
    assert out.returncode == 0, out.stdout
    assert len(out.stdout.strip().splitlines()) == len(files)
    assert all(line.startswith("ok ") for line in out.stdout.splitlines())


def test_validate_invalid_file_exit_1_without_traceback(tmp_path):
    doc = json.loads((EXAMPLES / "conv2d.json").read_text())
    doc["nodes"][0]["params"]["dim"] = 0  # unfold on the channel axis
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{oops")
    out = tessera("validate", str(EXAMPLES / "conv2d.json"), str(bad), str(garbage))
    assert out.returncode == 1
    assert "Traceback" not in out.stdout + out.stderr
    assert "unfold unfold_h: unfold needs a spatial axis; dim 0 (C_in)" in out.stdout
    assert "garbage.json: not valid JSON" in out.stdout


def test_bad_bindings_are_clear():
    out = tessera("info", str(EXAMPLES / "grouped_conv.json"), "--bind", "G=3")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "fc grouped_fc output channels per group: C_out/G = 64/3 is not an integer" in out.stdout
    out = tessera("info", str(EXAMPLES / "conv2d.json"), "--bind", "K=three")
    assert out.returncode == 1 and "cannot read binding 'K=three'" in out.stderr
    out = tessera("info", str(EXAMPLES / "conv2d.json"), "--bind", "Cin=16")  # a typo is not ignored
    assert out.returncode == 1 and out.stderr == (
        f"tessera info: no variable Cin in {EXAMPLES / 'conv2d.json'}; "
        "did you mean C_in? (variables: C_in, C_out, H, K, W)\n"
    )
